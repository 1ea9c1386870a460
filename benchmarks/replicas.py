"""Benchmark 8: one model on two endpoints (`api_base: [url, url]`) against one endpoint, at
the same per-endpoint concurrency.

Each endpoint is a loopback server in its own process that works on at most C requests at
once and queues the rest (`--max-concurrent`, as a vLLM server's `--max-num-seqs`), each taking
`LATENCY` seconds: one endpoint can answer C / LATENCY calls a second, so a second endpoint
doubles the capacity. The client is titjudge's call layer (`ModelHub` text calls, each a
distinct prompt, no cache hits) with `concurrency: C`, which on two endpoints means C per
endpoint (2 x C in flight). Latency and C are chosen so that the client's CPU (~15 ms a call
to one endpoint, ~25 through the Router) is not the bound at the two-endpoint rate. The backend is built (litellm imported) by
one warm-up call before the clock starts.

  python benchmarks/replicas.py [--quick]
"""

from __future__ import annotations

import asyncio
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import KEY, Section, Table, fmt, fresh_dir, server_process, standalone, timed_section  # noqa: E402

from titjudge.models.core.clients import SEND  # noqa: E402

TITLE = "12. One model on two endpoints (litellm Router) vs one endpoint"
MODEL = "litellm:openai/bench-replica"
LATENCY = 2.0
#: uniform [0, JITTER) seconds on top of LATENCY: replies of one batch do not all land at once
JITTER = 0.5


def _measure(urls: list[str], per_endpoint: int, calls: int, cache: Path) -> dict[str, Any]:
    """Wall seconds and CPU seconds of `calls` distinct text calls, after a warm-up call."""
    import os

    from titjudge.cache.store import CallCache
    from titjudge.models.core.base import GenerateRequest
    from titjudge.models.core.options import ModelOptions
    from titjudge.models.hub import ModelHub

    os.environ.setdefault("OPENAI_API_KEY", KEY)
    options = ModelOptions(
        api_base=urls if len(urls) > 1 else urls[0], concurrency=per_endpoint, timeout=120
    )
    client = ModelHub(CallCache(cache)).text_client(MODEL, options)

    async def run() -> tuple[float, float, int]:
        # enough at once to reach every endpoint: the Router makes each one's client on first use
        await asyncio.gather(
            *(
                client.text(
                    GenerateRequest(prompt=f"warm-up {i}", max_tokens=8),
                    role="describer",
                    probe=SEND,
                )
                for i in range(len(urls) * per_endpoint)
            )
        )
        started, cpu = time.perf_counter(), time.process_time()
        results = await asyncio.gather(
            *(
                client.text(
                    GenerateRequest(prompt=f"item {i}", max_tokens=8), role="describer", probe=SEND
                )
                for i in range(calls)
            )
        )
        wall = time.perf_counter() - started
        await client.backend.aclose()
        return wall, time.process_time() - cpu, sum(not r.ok for r in results)

    wall, cpu, failed = asyncio.run(run())
    return {"wall": wall, "cpu": cpu, "failed": failed}


def run(quick: bool, work: Path) -> Section:
    per_endpoint = 4 if quick else 8
    calls = 48 if quick else 240
    mean = LATENCY + JITTER / 2
    method = (
        f"{calls} distinct text calls through titjudge's call layer to `{MODEL}`, concurrency {per_endpoint} "
        f"per endpoint, against loopback servers in their own processes that each work on at most "
        f"{per_endpoint} requests at once (the rest queue, as a vLLM server's `--max-num-seqs`), {LATENCY:g} s "
        f"+ uniform [0, {JITTER:g}) s each: one endpoint can answer {per_endpoint / mean:.2f} calls/s. Baseline: the same calls to one endpoint, same per-endpoint "
        "concurrency. Ideal wall = calls x mean latency / (endpoints x concurrency). Both runs "
        "start with 2 x C warm-up calls (not timed)."
    )

    def body(section: Section) -> None:
        bench = fresh_dir(work / "replicas")
        args = ["--latency", f"{LATENCY:g}", "--jitter", f"{JITTER:g}"]
        args += ["--max-concurrent", str(per_endpoint)]
        table = Table(
            [
                "endpoints",
                "calls",
                "wall s",
                "ideal s",
                "calls/s",
                "requests per server",
                "peak in flight per server",
                "client CPU ms/call",
                "failed calls",
            ]
        )
        rates: dict[int, float] = {}
        for count in (1, 2):
            with ExitStack() as stack:
                servers = [stack.enter_context(server_process(args)) for _ in range(count)]
                m = _measure(
                    [s.url for s in servers],
                    per_endpoint,
                    calls,
                    fresh_dir(bench / f"cache{count}"),
                )
                stats = [s.stats() for s in servers]
            rates[count] = calls / m["wall"]
            table.add(
                count,
                calls,
                fmt(m["wall"], 1),
                fmt(calls * mean / (count * per_endpoint), 1),
                fmt(rates[count], 1),
                " / ".join(str(s["total"]) for s in stats),
                " / ".join(str(s["max_in_flight"]) for s in stats),
                fmt(m["cpu"] / calls * 1000, 1),
                m["failed"],
            )
        section.tables.append(table)
        section.headline(
            f"two endpoints vs one, {per_endpoint} in flight per endpoint (target >= 1.8x)",
            f"{rates[2]:.1f} calls/s ({rates[2] / rates[1]:.2f}x)",
            f"one endpoint {rates[1]:.1f} calls/s",
        )
        section.notes += [
            "requests per server include the warm-up calls; peak in flight per server is the server's own "
            f"count and never exceeds {per_endpoint} (the Router gives each endpoint at most the model's concurrency).",
            "client CPU ms/call is this process's CPU over the timed calls (litellm + titjudge; the servers run "
            "in other processes); the Router's picking and failover add ~10 ms a call; at ~25 ms a call one process tops out near "
            "40 calls/s on a quiet core, far above both rates; on a loaded machine the replies of a batch wait for "
            "the CPU, which costs two endpoints more.",
        ]

    return timed_section("replicas", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
