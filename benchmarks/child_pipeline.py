"""One measured pipeline run in a process of its own; prints a JSON report as its last line.

A child process per run gives each run its own peak RSS (VmHWM) and CPU time, and a
clean litellm / event-loop state. Modes:

  titjudge  CONFIG.json [--limit N] [--out DIR] [--time-eval]   `run_async` on a config
  seed-loop DATA URL [--limit N]   the seed scripts' way: one image at a time, describe
                                   then judge, each a bare `litellm.acompletion`
  idle                             import what a run imports, do nothing (memory floor)
  litellm-import                   CPU of importing the litellm backend once titjudge's run
                                   code is loaded (a fully cached re-run never pays it)
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import KEY, peak_rss_mib, read_jsonl  # noqa: E402

#: the paper's published comparer wording, as a seed script would send it (no JSON schema)
SEED_JUDGE = (
    "Please calculate the semantic similarity score between two texts.\n\nPROMPT:\n{prompt}\n\n"
    "DESCRIPTION:\n{description}\n\nAnswer with a score from 0 to 100."
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _report(started: float, cpu_started: float, **extra: Any) -> None:
    report = {
        "wall": time.perf_counter() - started,
        "cpu": time.process_time() - cpu_started,
        "peak_rss_mib": peak_rss_mib(),
        **extra,
    }
    print(json.dumps(report), flush=True)


async def _titjudge(
    config_path: Path, limit: int | None, out: Path | None, time_eval: bool
) -> None:
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.run.runner import run_async

    config = validate_config(json.loads(config_path.read_text()), RunConfig, str(config_path))
    timed: dict[str, float] = {}
    if time_eval:  # the evaluator's own time, measured on its call inside the run
        import titjudge.agents.finish as finish

        inner = finish.evaluate_run

        def evaluate_timed(*args: Any, **kwargs: Any) -> Any:
            eval_started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                timed["evaluate_seconds"] = time.perf_counter() - eval_started

        finish.evaluate_run = evaluate_timed  # type: ignore[assignment]
    started, cpu_started = time.perf_counter(), time.process_time()
    record = await run_async(config, limit=limit, out=out)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    summary = record.summary
    assert summary is not None
    extra: dict[str, Any] = {
        "summary": summary.summary_json(),
        "n_items": summary.items,
        "failed_items": summary.failed_items,
        "status": {name: counts.model_dump() for name, counts in summary.variants.items()},
    }
    extra.update(timed)
    report = {"wall": wall, "cpu": cpu, "peak_rss_mib": peak_rss_mib(), **extra}
    print(json.dumps(report), flush=True)


async def _seed_loop(data: Path, url: str, limit: int) -> None:
    """A plain loop: read the image, describe it, judge the description, next image."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from titjudge.prompts.loader import load_template

    _, describe = load_template("describe_paper").render()
    items = read_jsonl(data / "manifest.jsonl")[:limit]
    started, cpu_started = time.perf_counter(), time.process_time()
    scores, failures = 0, 0
    for item in items:
        image = base64.b64encode((data / item["image"]).read_bytes()).decode()
        described = await litellm.acompletion(
            model="openai/vlm",
            api_base=url,
            api_key=KEY,
            max_tokens=512,
            temperature=0,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:image/png;base64,{image}"},
                        },
                        {"type": "text", "text": describe},
                    ],
                }
            ],
        )
        description = described.choices[0].message.content
        judged = await litellm.acompletion(
            model="openai/judge",
            api_base=url,
            api_key=KEY,
            max_tokens=1024,
            temperature=0,
            messages=[
                {
                    "role": "user",
                    "content": SEED_JUDGE.format(prompt=item["prompt"], description=description),
                }
            ],
        )
        found = _NUMBER.search(judged.choices[0].message.content or "")
        scores += found is not None
        failures += found is None
    _report(started, cpu_started, n_items=len(items), scored=scores, failed_items=failures)


def _idle() -> None:
    started, cpu_started = time.perf_counter(), time.process_time()
    import litellm  # noqa: F401

    import titjudge.models.litellm.backend  # noqa: F401
    import titjudge.run.runner  # noqa: F401

    _report(started, cpu_started)


def _litellm_import() -> None:
    import titjudge.run.runner  # noqa: F401

    started, cpu_started = time.perf_counter(), time.process_time()
    import titjudge.models.litellm.backend  # noqa: F401

    _report(started, cpu_started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("titjudge")
    p.add_argument("config", type=Path)
    p.add_argument("--limit", type=int)
    p.add_argument("--out", type=Path)
    p.add_argument("--time-eval", action="store_true")
    p = sub.add_parser("seed-loop")
    p.add_argument("data", type=Path)
    p.add_argument("url")
    p.add_argument("--limit", type=int, default=100)
    sub.add_parser("idle")
    sub.add_parser("litellm-import")
    args = parser.parse_args()
    if args.mode == "titjudge":
        asyncio.run(_titjudge(args.config, args.limit, args.out, args.time_eval))
    elif args.mode == "seed-loop":
        asyncio.run(_seed_loop(args.data, args.url, args.limit))
    elif args.mode == "litellm-import":
        _litellm_import()
    else:
        _idle()
    return 0


if __name__ == "__main__":
    sys.exit(main())
