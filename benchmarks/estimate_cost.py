"""`titjudge estimate` against what the run then spends, and how long an estimate takes.

  python benchmarks/estimate_cost.py [--quick]

Spend: 260 items (20 prompts x 13 simulated T2I models of the synthetic benchmark); the
describer (`litellm:openai/vlm`, priced by its `price` option at Gemini 2.5 Pro's list price)
and the LLM judge (`litellm:openai/gpt-4o-mini`, priced by litellm's map) are served by the
loopback server in its own process, plus the lexical judge. Two cases, each on a fresh cache:
the estimate of a fresh run, then the run; a 20-item pilot run, the estimate, then the rest.
Speed: `titjudge estimate --json` in a child process on 2,600 items (200 x 13) with no answer
cached, the first time (it reads every image once) and again (image facts cached).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    KEY_ENV,
    REPO,
    Section,
    Table,
    child_env,
    fmt,
    fresh_dir,
    latest_run_dir,
    server_process,
    standalone,
    synthetic,
    timed_section,
)

TITLE = "15. Cost estimate vs the run's spend"
PRICE = {"input": 1.25, "output": 10.0}  # Gemini 2.5 Pro's list price, $ per 1M tokens


def config(data: Path, url: str, work: Path) -> dict:
    served = {"api_base": url, "api_key_env": KEY_ENV}
    return {
        "name": "cost",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": "litellm:openai/vlm", "price": PRICE, **served},
        "judges": [
            {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/gpt-4o-mini", **served},
            {"name": "lexical", "kind": "lexical"},
        ],
        "run": {"cache_dir": str(work / "cache"), "out": str(work / "runs"), "concurrency": 32},
    }


def titjudge(*args: str) -> tuple[str, float]:
    """Run `titjudge ARGS` in a child process: (stdout, wall seconds)."""
    env = child_env()
    env["HF_HUB_OFFLINE"] = "1"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "titjudge", *args], capture_output=True, text=True, env=env, cwd=REPO
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"titjudge {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout, wall


def estimate(path: Path, *extra: str) -> tuple[dict, float]:
    out, wall = titjudge("estimate", str(path), "--json", *extra)
    return json.loads(out), wall


def spent(work: Path) -> tuple[float, int]:
    summary = json.loads((latest_run_dir(work / "runs" / "cost") / "summary.json").read_text())
    usage = summary["usage"].values()
    return sum(u["cost"] for u in usage), sum(u["calls"] - u["cache_hits"] for u in usage)


def run(quick: bool, work: Path) -> Section:
    prompts, big = (4, 20) if quick else (20, 200)
    method = (
        f"`benchmarks/estimate_cost.py`: spend on {prompts * 13} items ({prompts} prompts x 13 "
        "models of the synthetic benchmark); describer `litellm:openai/vlm` (its `price` option: "
        "$1.25 / $10 per 1M tokens) and LLM judge `litellm:openai/gpt-4o-mini` (litellm's price) "
        "on the loopback server, lexical judge; output caps: describer 512 tokens (default), judge "
        f"1024. Speed: `titjudge estimate --json` on {big * 13} items, nothing cached but the "
        "image facts of the second call."
    )

    def body(section: Section) -> None:
        data = synthetic(work, prompts, 13)
        table = Table(
            [
                "case",
                "calls estimated",
                "calls sent",
                "estimate $",
                "worst case $",
                "spent $",
                "estimate / spent",
            ]
        )
        with server_process(
            ["--responder", "auto", "--descriptions", str(data / "descriptions.jsonl")]
        ) as server:
            for case, pilot in (("fresh", None), ("after a 20-item pilot", 20)):
                base = fresh_dir(work / f"spend-{pilot}")
                path = base / "config.json"
                path.write_text(json.dumps(config(data, server.url, base)))
                if pilot:
                    titjudge("run", str(path), "--limit", str(pilot))
                found, _ = estimate(path)
                titjudge("run", str(path))
                cost, sent = spent(base)
                table.add(
                    case,
                    found["calls"],
                    sent,
                    fmt(found["usd"], 4),
                    fmt(found["usd_max"], 4),
                    fmt(cost, 4),
                    fmt(found["usd"] / cost),
                )
                section.headline(
                    f"estimate vs spend, {prompts * 13} items, {case}",
                    f"${found['usd']:.4f} estimated, ${cost:.4f} spent",
                    f"worst case ${found['usd_max']:.4f}",
                )
        section.tables.append(table)
        data = synthetic(work, big, 13)
        base = fresh_dir(work / "speed")
        path = base / "config.json"
        path.write_text(json.dumps(config(data, "http://127.0.0.1:9/v1", base)))
        speed = Table(["estimate", "items", "calls", "wall s"])
        for name in ("first (reads every image once)", "again (image facts cached)"):
            found, wall = estimate(path)
            speed.add(name, found["items"], found["calls"], fmt(wall))
        section.tables.append(speed)
        section.headline(
            f"titjudge estimate, {big * 13} items, image facts cached",
            f"{wall:.2f} s",
            "target < 2 s",
        )
        section.notes.append(
            "calls sent = the run's calls less its cache hits; the pilot's calls are not in the "
            "row (the estimate is taken after the pilot)."
        )

    return timed_section("estimate", TITLE, method, body)


if __name__ == "__main__":
    raise SystemExit(standalone(run, __doc__))
