"""Benchmark 14: a describer whose endpoint refuses every call, 200 items.

`titjudge run` in a child process on the synthetic benchmark (40 prompts x 5 models = 200
items, a lexical judge, run.concurrency 8, the model's default retries) with the describer
pointed at (a) a closed loopback port and (b) a loopback server in its own process that
answers every request 401 with OpenAI's invalid_api_key body. Measured: wall time, exit code,
requests (the sum of the items' describer attempts; for the 401 server also its own count).
Baseline, same invocation: the same command on `git archive BASELINE_REF src` (no circuit
breaker: every item retried a refused connection up to max_attempts with backoff).

  python benchmarks/dead_endpoint.py [--quick]
"""

from __future__ import annotations

import json
import os
import socket
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
    baseline_src,
    child_env,
    fmt,
    latest_run_dir,
    read_jsonl,
    server_process,
    standalone,
    synthetic,
    timed_section,
)

TITLE = "14. A dead describer endpoint: 200 items"
#: main before the circuit breaker (issue 30)
BASELINE_REF = "c51cc5d"
CONCURRENCY = 8


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def measure(work: Path, manifest: Path, url: str, src: Path, label: str) -> dict:
    """One `titjudge run` child with `src` first on PYTHONPATH: exit, wall, requests."""
    config = {
        "name": f"dead-{label}",
        "data": {"manifest": str(manifest)},
        "describer": {"model": "litellm:openai/bench-vlm", "api_base": url, "api_key_env": KEY_ENV},
        "judges": [{"name": "lexical", "kind": "lexical"}],
        "run": {
            "concurrency": CONCURRENCY,
            "cache_dir": str(work / f"cache-{label}"),
            "out": str(work / "runs"),
        },
    }
    path = work / f"config-{label}.json"
    path.write_text(json.dumps(config))
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "titjudge", "run", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        timeout=3600,
    )
    wall = time.perf_counter() - started
    items = read_jsonl(latest_run_dir(work / "runs" / f"dead-{label}") / "items.jsonl")
    requests = sum(item["describer"].get("attempts", 0) for item in items)
    reasons = [line for line in done.stdout.splitlines() if "x " in line and "describer" in line]
    return {"exit": done.returncode, "wall": wall, "requests": requests, "reason": reasons}


def run(quick: bool, work: Path) -> Section:
    prompts = 8 if quick else 40
    n_items = prompts * 5
    method = (
        f"`python -m titjudge run` in a child process: {n_items} synthetic items, a lexical judge, "
        f"run.concurrency {CONCURRENCY}, default retries (max_attempts 6, backoff from 1 s), the "
        "describer pointed at a closed loopback port, and at a loopback server (own process) "
        "answering every request 401 with OpenAI's invalid_api_key body. Requests: the sum of "
        "the items' describer attempts. Baseline, same invocation: the same command on "
        f"`git archive {BASELINE_REF} src` (before the circuit breaker)."
    )

    def body(section: Section) -> None:
        manifest = synthetic(work, prompts, 5) / "manifest.jsonl"
        old_src = baseline_src(work, BASELINE_REF)
        table = Table(["endpoint", "code", "wall s", "exit", "requests", "grouped reason shown"])
        walls: dict[tuple[str, str], float] = {}
        with server_process(["--fault-rate", "1", "--faults", "401"]) as server:
            for endpoint, url in (("closed port", closed_url()), ("401 server", server.url)):
                for label, src in (("before", old_src), ("after", REPO / "src")):
                    m = measure(work, manifest, url, src, f"{label}-{endpoint.split()[0]}")
                    walls[endpoint, label] = m["wall"]
                    table.add(
                        endpoint,
                        f"before ({BASELINE_REF})" if label == "before" else "after (this branch)",
                        fmt(m["wall"], 1),
                        m["exit"],
                        m["requests"],
                        "; ".join(m["reason"]) or "-",
                    )
        for endpoint in ("closed port", "401 server"):
            section.headline(
                f"dead describer ({endpoint}), {n_items} items, wall",
                f"{fmt(walls[endpoint, 'after'], 1)} s",
                f"before the breaker: {fmt(walls[endpoint, 'before'], 1)} s",
            )
        section.tables.append(table)
        section.notes.append(
            "run.stop_after 5 (the default): the model is stopped after 5 requests in a row "
            "failed with a reason that will not heal; its other calls fail unsent"
        )

    return timed_section("dead_endpoint", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
