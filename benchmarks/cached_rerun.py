"""A fully cached re-run against the fresh run it repeats: wall time and what it imports.

  python benchmarks/cached_rerun.py [--quick]

130 items (10 prompts x 13 simulated T2I models of the synthetic benchmark); the describer and
an LLM judge are litellm models served by the loopback server in its own process, the
TIT-Score judge is all-MiniLM-L6-v2 on CPU (the `demo` extra; a tiny random Qwen3-Embedding
when it is not installed), plus the lexical judge; 1000 bootstrap resamples. Each run is
`titjudge run` in a child process (wall, CPU, peak RSS from os.wait4), which reports the
heavy modules it imported. Rows: the fresh run; the cached re-run; and, as the baseline from
the same invocation, the cached re-run of the code before backends were lazy (commit
BASELINE_REV, unpacked with `git archive` and put first on PYTHONPATH).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    KEY_ENV,
    REPO,
    Section,
    Table,
    baseline_src,
    fmt,
    fresh_dir,
    server_process,
    standalone,
    synthetic,
    timed_section,
)

TITLE = "9. Fully cached re-run: what it loads and how long it takes"
#: main just before litellm:/embed: backends became lazy
BASELINE_REV = "db5157e"
HEAVY = ("litellm", "torch", "transformers", "sentence_transformers")
CHILD = f"""
import json, sys
from titjudge.cli import main
code = main(sys.argv[1:])
print("REPORT " + json.dumps({{"modules": [m for m in {HEAVY!r} if m in sys.modules]}}))
sys.exit(code)
"""


def embedding_model(work: Path) -> tuple[str, str]:
    """(model spec, what it is): MiniLM from the demo extra, else a tiny random checkpoint."""
    from titjudge.cli.demo import minilm_dir

    found = minilm_dir()
    if found is not None:
        return f"embed:{found}", "all-MiniLM-L6-v2 (demo extra)"
    from doubles.tiny_models import build_tiny_qwen3_embedding

    return f"embed:{build_tiny_qwen3_embedding(work / 'tiny-embedding')}", "tiny Qwen3-Embedding"


def config(data: Path, url: str, work: Path, embed: str) -> dict:
    served = {"api_base": url, "api_key_env": KEY_ENV}
    return {
        "name": "rerun",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": "litellm:openai/vlm", **served},
        "judges": [
            {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge", **served},
            {"name": "tit_score", "kind": "embedding", "model": embed},
            {"name": "lexical", "kind": "lexical"},
        ],
        "run": {"cache_dir": str(work / "cache"), "out": str(work / "runs"), "concurrency": 32},
    }


def run_once(config_path: Path, pythonpath: str | None) -> dict:
    """One `titjudge run` child: exit code, wall, CPU, peak RSS, heavy modules imported."""
    import os

    from harness import child_env

    env = child_env()
    env["HF_HUB_OFFLINE"] = "1"
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, "run", str(config_path)],
            stdout=out,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=REPO,
        )
        import time

        started = time.perf_counter()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        lines = [x for x in out.read().splitlines() if x.startswith("REPORT ")]
    if not lines or os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"titjudge run exited {os.waitstatus_to_exitcode(status)}")
    report = json.loads(lines[-1].removeprefix("REPORT "))
    return {
        **report,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
    }


def run(quick: bool, work: Path) -> Section:
    prompts = 4 if quick else 10
    method = (
        f"`benchmarks/cached_rerun.py`: {prompts * 13} items ({prompts} prompts x 13 models of the "
        "synthetic benchmark), describer and LLM judge = litellm models on the loopback server "
        "(its own process, no added latency), TIT-Score = an `embed:` model on CPU, lexical "
        "judge, 1000 bootstrap resamples; each run is `titjudge run` in a child process. The "
        f"baseline is the cached re-run of the code at {BASELINE_REV} (before `litellm:` and "
        "`embed:` backends were built lazily), timed in the same invocation on the same cache."
    )

    def body(section: Section) -> None:
        data = synthetic(work, prompts, 13)
        embed, what = embedding_model(work)
        old = str(baseline_src(work, BASELINE_REV))
        table = Table(["run", "wall s", "CPU s", "peak RSS MiB", "heavy modules imported"])
        with server_process(
            ["--responder", "auto", "--descriptions", str(data / "descriptions.jsonl")]
        ) as server:
            base = fresh_dir(work / "rerun")
            path = base / "config.json"
            path.write_text(json.dumps(config(data, server.url, base, embed)))
            rows = {
                "fresh run": run_once(path, None),
                "fully cached re-run": run_once(path, None),
                f"fully cached re-run, code at {BASELINE_REV} (baseline)": run_once(path, old),
            }
            asked = server.stats()["total"]
        for name, r in rows.items():
            table.add(
                name,
                fmt(r["wall"]),
                fmt(r["cpu"]),
                fmt(r["rss_mib"], 0),
                ", ".join(r["modules"]) or "none",
            )
        table.caption = f"TIT-Score model: {what}; requests the server answered in all: {asked}"
        section.tables.append(table)
        fresh, cached = rows["fresh run"], rows["fully cached re-run"]
        old_cached = rows[f"fully cached re-run, code at {BASELINE_REV} (baseline)"]
        section.headline(
            f"fully cached re-run, {prompts * 13} items, wall / fresh run's",
            f"{cached['wall']:.2f} s = {cached['wall'] / fresh['wall']:.2f}x of fresh "
            f"{fresh['wall']:.2f} s",
            f"before lazy backends {old_cached['wall']:.2f} s = "
            f"{old_cached['wall'] / fresh['wall']:.2f}x",
        )
        section.notes.append(
            "target: a fully cached re-run imports neither litellm nor torch and takes at most "
            f"a quarter of the fresh run's wall time: "
            f"{'met' if cached['wall'] <= fresh['wall'] / 4 and not cached['modules'] else 'NOT met'}."
        )

    return timed_section("rerun", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
