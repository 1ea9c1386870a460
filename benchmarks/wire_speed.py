"""Benchmark 23: the client at wire speed: CPU per model call on each send path, against
the raw HTTP floor, in the same run against the same loopback server.

Part 1, one process: N calls with the body titjudge builds for a judge (a ~300-word prompt),
at concurrency 1 and 16, against a zero-latency loopback server in its own process; CPU =
`time.process_time()` of this process (the server's is not counted). Variants, interleaved
in rounds (median round reported): raw `httpx.AsyncClient.post` (the floor), the `openai`
SDK's `AsyncOpenAI.chat.completions.create`, a bare `litellm.acompletion`, and titjudge's
`ModelClient.text` (the call layer: limiter, retries, validation, provenance; no cache) on
each transport, `direct` and `litellm`.

Part 2, a whole `titjudge run` in a child process (describe + LLM judge, `run.concurrency`
16, a fresh cache) on each transport, against the same zero-latency server: the run's CPU
per model call, beside raw httpx's from part 1.

  python benchmarks/wire_speed.py [--quick]
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from call_overhead import judge_prompt  # noqa: E402
from harness import (  # noqa: E402
    KEY,
    KEY_ENV,
    Section,
    Table,
    fmt,
    fresh_dir,
    run_child,
    server_process,
    synthetic,
    timed_section,
)

TITLE = "23. The client at wire speed: CPU per call on each send path"
#: part 3's long tail: lognormal latency, median 0.2 s, p95 0.8 s
MEDIAN, P95 = 0.2, 0.8
#: the lognormal's sigma: ln(p95 / median) / z(0.95)
SIGMA = math.log(P95 / MEDIAN) / 1.6448536
LONG_TAIL = ["--latency", str(MEDIAN), "--latency-sigma", f"{SIGMA:.6f}"]
WIDE = 64
MODEL = "bench-judge"


def _body(index: int) -> dict[str, Any]:
    return {
        "model": MODEL,
        "messages": [{"role": "user", "content": judge_prompt(index)}],
        "max_tokens": 256,
        "temperature": 0.0,
    }


class Clients:
    """Every variant's client, built once, on this process's one event loop."""

    def __init__(self, url: str):
        import httpx
        import openai

        from titjudge.cache.store import CallCache
        from titjudge.models.core.options import ModelOptions
        from titjudge.models.hub import ModelHub

        self.url = url
        self.counter = 0
        self.httpx = httpx.AsyncClient(
            base_url=url,
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=120,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=256),
        )
        self.sdk = openai.AsyncOpenAI(base_url=url, api_key=KEY, max_retries=0, timeout=120)
        self.aiohttp: Any = None
        self.titjudge = {}
        for transport in ("direct", "litellm"):
            options = ModelOptions(
                api_base=url, api_key_env=KEY_ENV, max_attempts=2, transport=transport
            )
            hub = ModelHub(CallCache(None))
            self.titjudge[transport] = hub.text_client(f"litellm:openai/{MODEL}", options)

    def next(self) -> int:
        self.counter += 1
        return self.counter

    async def raw_httpx(self) -> None:
        reply = (await self.httpx.post("/chat/completions", json=_body(self.next()))).json()
        if not reply["choices"][0]["message"]["content"]:
            raise RuntimeError("raw httpx: no text")

    async def raw_aiohttp(self) -> None:
        import aiohttp

        if self.aiohttp is None:
            self.aiohttp = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
        data = json.dumps(_body(self.next())).encode()
        async with self.aiohttp.post(
            f"{self.url}/chat/completions", data=data, headers=headers
        ) as response:
            reply = json.loads(await response.read())
        if not reply["choices"][0]["message"]["content"]:
            raise RuntimeError("raw aiohttp: no text")

    async def openai_sdk(self) -> None:
        body = _body(self.next())
        reply = await self.sdk.chat.completions.create(**body)
        if not reply.choices[0].message.content:
            raise RuntimeError("openai SDK: no text")

    async def bare_litellm(self) -> None:
        import litellm

        reply = await litellm.acompletion(
            **{**_body(self.next()), "model": f"openai/{MODEL}"},
            api_base=self.url,
            api_key=KEY,
            timeout=120.0,
            num_retries=0,
            max_retries=0,
        )
        if not reply.choices[0].message.content:
            raise RuntimeError("bare litellm: no text")

    def titjudge_call(self, transport: str) -> Callable[[], Awaitable[None]]:
        from titjudge.models.core.base import GenerateRequest
        from titjudge.models.core.clients import SEND

        client = self.titjudge[transport]

        async def call() -> None:
            request = GenerateRequest(prompt=judge_prompt(self.next()), max_tokens=256)
            result = await client.text(request, role="bench", probe=SEND)
            if not result.ok:
                raise RuntimeError(f"titjudge ({transport}): {result.error}")

        return call

    async def aclose(self) -> None:
        await self.httpx.aclose()
        await self.sdk.close()
        if self.aiohttp is not None:
            await self.aiohttp.close()
        for client in self.titjudge.values():
            await client.backend.aclose()


async def _measure(call: Callable[[], Awaitable[None]], n: int, concurrency: int) -> float:
    """CPU ms per call of n calls, `concurrency` at a time."""
    left = iter(range(n))

    async def worker() -> None:
        for _ in left:
            await call()

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return (time.process_time() - started) * 1000 / n


async def _client_rows(url: str, n: int, rounds: int) -> dict[tuple[str, int], float]:
    clients = Clients(url)
    variants: dict[str, Callable[[], Awaitable[None]]] = {
        "raw httpx POST (floor)": clients.raw_httpx,
        "raw aiohttp POST": clients.raw_aiohttp,
        "openai SDK AsyncOpenAI": clients.openai_sdk,
        "bare litellm.acompletion": clients.bare_litellm,
        "titjudge ModelClient.text, transport direct": clients.titjudge_call("direct"),
        "titjudge ModelClient.text, transport litellm": clients.titjudge_call("litellm"),
    }
    for call in variants.values():  # warm up: imports, pools, litellm's lazy set-up
        await _measure(call, 20, 4)
    samples: dict[tuple[str, int], list[float]] = {}
    for _ in range(rounds):
        for concurrency in (1, 16):
            for name, call in variants.items():
                samples.setdefault((name, concurrency), []).append(
                    await _measure(call, n, concurrency)
                )
    await clients.aclose()
    return {key: statistics.median(values) for key, values in samples.items()}


def _run_config(data: Path, url: str, work: Path, transport: str, concurrency: int = 16) -> Path:
    model = {
        "model": f"litellm:openai/{MODEL}",
        "api_base": url,
        "api_key_env": KEY_ENV,
        "concurrency": concurrency,
        "transport": transport,
    }
    config = {
        "name": f"wire-{transport}",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": dict(model),
        "judges": [{"name": "tit_llm", "kind": "llm", **model}],
        "run": {
            "concurrency": concurrency,
            "cache_dir": str(fresh_dir(work / f"cache-{transport}")),
            "out": str(work / "runs"),
        },
    }
    path = work / f"config-{transport}.json"
    path.write_text(json.dumps(config))
    return path


def _whole_runs(work: Path, data: Path, rounds: int) -> dict[str, dict[str, Any]]:
    """Each transport's run, `rounds` times interleaved (the median CPU kept)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    server_args = ["--latency", "0", "--responder", "auto"]
    server_args += ["--descriptions", str(data / "descriptions.jsonl")]
    with server_process(server_args) as server:
        for _ in range(rounds):
            for transport in ("direct", "litellm"):
                config = _run_config(data, server.url, work, transport)
                out = fresh_dir(work / "runs" / f"wire-{transport}")
                report = run_child(
                    "child_pipeline.py", ["titjudge", str(config), "--out", str(out)]
                )
                runs.setdefault(transport, []).append(report)
    return {
        transport: sorted(reports, key=lambda r: r["cpu"])[len(reports) // 2]
        for transport, reports in runs.items()
    }


def _flow(records: list[dict[str, Any]]) -> tuple[float, float]:
    """(mean requests in flight, seconds from the first arrival to the last reply), from the
    server's log."""
    span = max(r["finished"] for r in records) - min(r["arrived"] for r in records)
    busy = sum(r["finished"] - r["arrived"] for r in records)
    return busy / span, span


async def _raw_chains(url: str, data: Path, concurrency: int) -> None:
    """Each item as the run asks it, on raw httpx: its image described, then the
    description judged; at most `concurrency` requests in flight."""
    import base64

    import httpx

    lines = [json.loads(line) for line in (data / "manifest.jsonl").read_text().splitlines()]
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(
        base_url=url,
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=120,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=256),
    ) as client:

        async def item(line: dict[str, Any]) -> None:
            image = base64.b64encode((data / line["image"]).read_bytes()).decode()
            describe = {
                "model": MODEL,
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image_url",
                                "image_url": {"url": f"data:image/png;base64,{image}"},
                            },
                            {"type": "text", "text": "Describe this image in detail."},
                        ],
                    }
                ],
                "max_tokens": 512,
                "temperature": 0.0,
            }
            async with slots:
                said = (await client.post("/chat/completions", json=describe)).json()
            text = said["choices"][0]["message"]["content"]
            judge = _body(0)
            judge["messages"][0]["content"] = f"PROMPT:\n{line['prompt']}\n\nDESCRIPTION:\n{text}"
            async with slots:
                (await client.post("/chat/completions", json=judge)).json()

        await asyncio.gather(*(item(line) for line in lines))


def _long_tail(work: Path, data: Path) -> dict[str, tuple[float, float, float, float]]:
    """(mean in flight, request span s, wall s, client CPU s) of raw httpx and of a run per
    transport at concurrency WIDE against the long tail."""
    found: dict[str, tuple[float, float, float, float]] = {}
    args = [*LONG_TAIL, "--responder", "auto", "--descriptions", str(data / "descriptions.jsonl")]
    with server_process(args) as server:
        wall, cpu = time.perf_counter(), time.process_time()
        asyncio.run(_raw_chains(server.url, data, WIDE))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        flow = _flow(server.stats(records=1_000_000)["records"])
    found["raw httpx, describe then judge per item"] = (*flow, wall, cpu)
    for transport in ("direct", "litellm"):
        with server_process(args) as server:
            config = _run_config(data, server.url, work, transport, WIDE)
            out = fresh_dir(work / "runs" / f"tail-{transport}")
            report = run_child("child_pipeline.py", ["titjudge", str(config), "--out", str(out)])
            flow = _flow(server.stats(records=1_000_000)["records"])
        found[f"titjudge run, transport {transport}"] = (*flow, report["wall"], report["cpu"])
    return found


def run(quick: bool, work: Path) -> Section:
    n, rounds = (200, 2) if quick else (2000, 3)
    prompts = 20 if quick else 77  # x 13 models: 260 or 1,001 items
    method = (
        f"Part 1: {n:,} calls per variant and round at concurrency 1 and 16, {rounds} rounds "
        "interleaved, median round; one process, a zero-latency loopback server in its own "
        "process, CPU of the client process only. The titjudge rows are the call layer "
        "(`ModelClient.text`: limiter, retries, validation, provenance; no cache). Part 2: a "
        f"whole `titjudge run` ({prompts * 13:,} items, describe + LLM judge, concurrency 16, "
        "fresh cache) per transport in a child process, median of "
        f"{rounds}; its CPU per model call against raw httpx's at concurrency 16 from part 1. "
        f"Part 3: the same items at concurrency {WIDE} against a long tail (each request waits a "
        f"seeded lognormal latency, median {MEDIAN:g} s, p95 {P95:g} s): raw httpx asking each "
        "item as the run does (its image described, then the description judged, at most "
        f"{WIDE} requests in flight) against a run per transport; requests in flight and the "
        "request span from the server's log (first arrival to last reply)."
    )

    def body(section: Section) -> None:
        os.environ[KEY_ENV] = KEY
        with server_process(["--latency", "0", "--responder", "auto"]) as server:
            cpu = asyncio.run(_client_rows(server.url, n, rounds))
        table = Table(
            ["variant", "CPU ms / call, c=1", "x raw httpx", "CPU ms / call, c=16", "x raw httpx"]
        )
        floor = {c: cpu[("raw httpx POST (floor)", c)] for c in (1, 16)}
        for name in dict.fromkeys(name for name, _ in cpu):
            cells = []
            for c in (1, 16):
                cells += [fmt(cpu[(name, c)]), f"{cpu[(name, c)] / floor[c]:.2f}x"]
            table.add(name, *cells)
        section.tables.append(table)
        direct = cpu[("titjudge ModelClient.text, transport direct", 16)]
        via = cpu[("titjudge ModelClient.text, transport litellm", 16)]
        section.headline(
            "call layer CPU per call at c=16, transport direct vs litellm",
            f"{direct:.2f} ms",
            f"{via:.2f} ms (raw httpx {floor[16]:.2f} ms)",
        )
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            data = synthetic(Path(tmp), prompts, 13)
            whole = _whole_runs(Path(tmp), data, rounds)
        runs = Table(
            [
                "transport",
                "items",
                "model calls",
                "run CPU s",
                "CPU ms / call",
                "x raw httpx (c=16)",
                "peak RSS MiB",
            ]
        )
        for transport, report in whole.items():
            items = int(report["n_items"])
            calls = 2 * items
            per_call = report["cpu"] * 1000 / calls
            runs.add(
                transport,
                f"{items:,}",
                f"{calls:,}",
                fmt(report["cpu"]),
                fmt(per_call),
                f"{per_call / floor[16]:.2f}x",
                fmt(report["peak_rss_mib"], 0),
            )
            if report["failed_items"]:
                raise RuntimeError(f"{transport}: {report['failed_items']} items failed")
        section.tables.append(runs)
        per_call = {t: r["cpu"] * 1000 / (2 * int(r["n_items"])) for t, r in whole.items()}
        section.headline(
            "whole run CPU per model call, transport direct vs litellm",
            f"{per_call['direct']:.2f} ms ({per_call['direct'] / floor[16]:.1f}x raw httpx)",
            f"{per_call['litellm']:.2f} ms ({per_call['litellm'] / floor[16]:.1f}x raw httpx)",
        )
        section.notes.append(
            "A whole run's CPU includes its start-up (imports, building the graph, writing the "
            "run dir), spread over its calls."
        )
        section.notes.append(
            "Sections measured before 2026-12-04 (1, 1b, 3, 7, 10, 10b, 12, 14, 15, 16 among "
            "them) sent every OpenAI-compatible call through litellm: their runs predate the "
            "direct path, which is now the default (`transport: auto`); `run_all.py` "
            "re-measures them."
        )
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            data = synthetic(Path(tmp), prompts, 13)
            tail = _long_tail(Path(tmp), data)
        table = Table(
            [
                "client",
                "mean requests in flight",
                "x raw httpx",
                "request span s",
                "x raw httpx",
                "wall s",
                "client CPU s",
            ]
        )
        raw_flight, raw_span = tail["raw httpx, describe then judge per item"][:2]
        for name, (flight, span, wall, cpu_s) in tail.items():
            table.add(
                name,
                fmt(flight, 1),
                f"{flight / raw_flight:.2f}x",
                fmt(span),
                f"{span / raw_span:.2f}x",
                fmt(wall),
                fmt(cpu_s),
            )
        section.tables.append(table)
        direct_flight, direct_span = tail["titjudge run, transport direct"][:2]
        section.headline(
            f"long tail at c={WIDE}: requests in flight, run (direct) vs raw httpx",
            f"{direct_flight:.1f} (span {direct_span:.1f} s)",
            f"{raw_flight:.1f} (span {raw_span:.1f} s)",
        )

    return timed_section("wire_speed", TITLE, method, body)


if __name__ == "__main__":
    from harness import standalone

    sys.exit(standalone(run, __doc__))
