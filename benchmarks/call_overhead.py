"""Benchmark 3: framework overhead per model call, and the cache lookup time per hit.

Against a loopback server at zero latency (in its own process), N sequential calls each:
a bare `litellm.acompletion` with the kwargs titjudge's backend sends (the baseline), then
the same request through titjudge's `ModelClient` (limiter, retries, validation) without a
cache, with a cache (every call a miss: lookup, claim, store), as validated JSON
(`structured`, against bare litellm with the same response_format), and as cache hits.
CPU = `time.process_time()` of this process (the server's CPU is not counted). Variants
run interleaved in rounds and the median round is reported, so a load spike from other
jobs hits all variants alike. Prompts are unique per call (no hit, no request sharing)
except in the hit variant. Two model names: one litellm's price map does not know (as
with a self-hosted model) and one it does (`gpt-4o-mini`: litellm then prices each reply).

  python benchmarks/call_overhead.py [--quick]
"""

from __future__ import annotations

import asyncio
import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import KEY, KEY_ENV, Section, Table, fmt, server_process, standalone, timed_section  # noqa: E402

from titjudge.models.core.clients import SEND  # noqa: E402

TITLE = "3. Framework overhead per call (zero latency)"
#: a judge-sized request (~300-word prompt and description), like every TIT-Score-LLM call
FILLER = (
    "a small red cat sits on a woven mat near a wooden door while warm light falls through a tall "
    "window and paints yellow stripes across the floor "
) * 15


def judge_prompt(index: int) -> str:
    return f"PROMPT:\n{FILLER} (call {index})\n\nDESCRIPTION:\n{FILLER}"


class Bench:
    """The clients of one model name, built once; each `run_*` does `n` sequential calls."""

    def __init__(self, url: str, model: str, cache_dir: Path):
        from titjudge.cache.store import CallCache
        from titjudge.judges.schemas import JudgeVerdict
        from titjudge.models.core.options import ModelOptions
        from titjudge.models.hub import ModelHub

        self.url, self.model = url, model
        options = ModelOptions(
            api_base=url, api_key_env=KEY_ENV, max_attempts=2, backoff_initial=0.1
        )
        self.bare_client = ModelHub(CallCache(None)).text_client(f"litellm:openai/{model}", options)
        self.cache = CallCache(cache_dir)
        self.cached_client = ModelHub(self.cache).text_client(f"litellm:openai/{model}", options)
        self.schema = JudgeVerdict
        self.counter = 0
        self.http: Any = None

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    def _request(self, index: int) -> Any:
        from titjudge.models.core.base import GenerateRequest

        return GenerateRequest(prompt=judge_prompt(index), max_tokens=256)

    async def bare(self, n: int, structured: bool = False) -> None:
        import litellm

        from titjudge.models.calls.structured import response_schema

        extra: dict[str, Any] = {}
        if structured:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "JudgeVerdict",
                    "schema": response_schema(self.schema),
                    "strict": False,
                },
            }
        for _ in range(n):
            reply = await litellm.acompletion(
                model=f"openai/{self.model}",
                messages=[{"role": "user", "content": judge_prompt(self._next())}],
                max_tokens=256,
                temperature=0.0,
                timeout=120.0,
                num_retries=0,
                max_retries=0,
                api_base=self.url,
                api_key=KEY,
                **extra,
            )
            if not reply.choices[0].message.content:
                raise RuntimeError("bare litellm call returned no text")

    async def raw_http(self, n: int) -> None:
        """The same request as a plain HTTP POST: the floor under any client library."""
        import httpx

        if self.http is None:
            self.http = httpx.AsyncClient(
                base_url=self.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=120
            )
        for _ in range(n):
            body = {
                "model": self.model,
                "messages": [{"role": "user", "content": judge_prompt(self._next())}],
                "max_tokens": 256,
                "temperature": 0.0,
            }
            reply = (await self.http.post("/chat/completions", json=body)).json()
            if not reply["choices"][0]["message"]["content"]:
                raise RuntimeError("raw HTTP call returned no text")

    async def titjudge_text(self, n: int, cached: bool) -> None:
        client = self.cached_client if cached else self.bare_client
        for _ in range(n):
            result = await client.text(self._request(self._next()), role="bench", probe=SEND)
            if not result.ok or result.cached:
                raise RuntimeError(f"titjudge call failed or was a hit: {result.error}")

    async def titjudge_structured(self, n: int) -> None:
        for _ in range(n):
            result = await self.bare_client.structured(
                self._request(self._next()), self.schema, role="bench", probe=SEND
            )
            if not result.ok:
                raise RuntimeError(f"titjudge structured call failed: {result.error}")

    async def hits(self, first: int, n: int) -> None:
        """Ask again what calls first..first+n-1 of the cached variant asked: all hits."""
        for index in range(first, first + n):
            result = await self.cached_client.text(self._request(index), role="bench", probe=SEND)
            if not (result.ok and result.cached):
                raise RuntimeError("expected a cache hit")


async def _measure(run: Callable[[], Awaitable[None]], n: int) -> tuple[float, float]:
    """(CPU ms, wall ms) per call over one round."""
    cpu, wall = time.process_time(), time.perf_counter()
    await run()
    return (time.process_time() - cpu) * 1000 / n, (time.perf_counter() - wall) * 1000 / n


async def _model_rows(bench: Bench, n: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    await bench.bare(10)  # warm up: imports, connection pool, litellm's lazy set-up
    await bench.titjudge_text(10, cached=False)
    await bench.titjudge_structured(5)
    await bench.raw_http(5)
    samples: dict[str, list[tuple[float, float]]] = {}
    for _ in range(rounds):
        hit_start = bench.counter + 1
        variants: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("bare litellm (text)", lambda: bench.bare(n)),
            ("titjudge ModelClient.text, no cache", lambda: bench.titjudge_text(n, cached=False)),
            (
                "titjudge ModelClient.text, cache (miss + store)",
                lambda: bench.titjudge_text(n, cached=True),
            ),
            ("bare litellm (json_schema response_format)", lambda: bench.bare(n, structured=True)),
            ("titjudge ModelClient.structured, no cache", lambda: bench.titjudge_structured(n)),
            ("raw httpx POST, no client library (floor, for scale)", lambda: bench.raw_http(n)),
        ]
        for name, run in variants:
            if name.startswith("titjudge ModelClient.text, cache"):
                hit_start = bench.counter + 1
            samples.setdefault(name, []).append(await _measure(run, n))
        samples.setdefault("titjudge ModelClient.text, cache hit", []).append(
            await _measure(functools.partial(bench.hits, hit_start, n), n)
        )
    await bench.http.aclose()
    return samples


def _raw_hit_micros(cache: Any, keys: list[str], repeats: int) -> float:
    """Median microseconds of one `CallCache.get` on a present key (no model layer)."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        for key in keys:
            if cache.get(key, "bench") is None:
                raise RuntimeError("raw cache lookup missed")
        runs.append((time.perf_counter() - started) * 1e6 / len(keys))
    return float(statistics.median(runs))


def _fill_cache(cache: Any, n: int) -> list[str]:
    """n entries shaped like stored judge answers (a few hundred bytes of JSON each)."""
    keys = [f"bench-key-{i:06d}" for i in range(n)]
    value = {
        "text": '{"rationale": "' + "word " * 60 + '", "score": 71}',
        "data": {"rationale": "x" * 300, "score": 71},
        "reasked": False,
        "tokens_in": 900,
        "tokens_out": 80,
        "cost": None,
        "attempts": 1,
        "logprobs": None,
    }
    for key in keys:
        cache.set(key, value, "bench")
    return keys


def run(quick: bool, work: Path) -> Section:
    n, rounds = (40, 3) if quick else (120, 5)
    entries = 2_000 if quick else 20_000
    method = (
        f"Each variant makes {n} sequential calls per round, {rounds} rounds interleaved; the table shows the median "
        "round. Baseline: a bare `litellm.acompletion` with the same kwargs titjudge's backend sends. The server runs "
        "in another process with zero latency, so the wall time is client CPU plus loopback HTTP. Prompts are ~300 "
        "words (a judge call). `overhead` = titjudge CPU minus the matching bare litellm CPU. The raw lookup row "
        f"times `CallCache.get` alone on a diskcache holding {entries:,} judge-sized entries."
    )

    def body(section: Section) -> None:
        table = Table(
            ["model name", "variant", "CPU ms / call", "wall ms / call", "overhead CPU ms vs bare"]
        )
        os.environ[KEY_ENV] = KEY
        with server_process(["--latency", "0", "--responder", "auto"]) as server:
            for model in ("bench-model", "gpt-4o-mini"):
                with tempfile.TemporaryDirectory(dir=work) as tmp:
                    bench = Bench(server.url, model, Path(tmp) / "cache")
                    samples = asyncio.run(_model_rows(bench, n, rounds))
                    bench.cache.close()
                medians = {
                    name: (statistics.median(c for c, _ in s), statistics.median(w for _, w in s))
                    for name, s in samples.items()
                }
                base_text = medians["bare litellm (text)"][0]
                base_json = medians["bare litellm (json_schema response_format)"][0]
                if model == "bench-model":
                    text_cpu = medians["titjudge ModelClient.text, cache (miss + store)"][0]
                    hit_wall = medians["titjudge ModelClient.text, cache hit"][1]
                    section.headline(
                        "CPU per model call, zero latency (titjudge client with cache vs bare litellm)",
                        f"{text_cpu:.2f} ms",
                        f"{base_text:.2f} ms",
                    )
                    section.headline(
                        "cache hit through ModelClient (wall per call)",
                        f"{hit_wall:.3f} ms",
                        f"a model call at zero latency {medians['bare litellm (text)'][1]:.2f} ms",
                    )
                for name, (cpu, wall) in medians.items():
                    base = base_json if "structured" in name or "json_schema" in name else base_text
                    over = (
                        "baseline"
                        if name.startswith("bare")
                        else "- (no model call)"
                        if name.endswith("hit")
                        else f"{cpu - base:+.2f}"
                    )
                    if name.startswith("raw httpx"):
                        over = f"bare litellm uses {base_text - cpu:.2f} more"
                    table.add(f"`openai/{model}`", name, fmt(cpu), fmt(wall), over)
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            from titjudge.cache.store import CallCache

            cache = CallCache(Path(tmp) / "cache")
            keys = _fill_cache(cache, entries)
            micros = _raw_hit_micros(cache, keys[:: max(1, entries // 2000)], repeats=5)
            cache.close()
        section.headline(f"raw cache lookup per hit ({entries:,} entries)", f"{micros:.0f} µs", "-")
        table.add(
            "-",
            f"raw `CallCache.get` hit ({entries:,} entries)",
            fmt(micros / 1000, 3),
            fmt(micros / 1000, 3),
            "-",
        )
        section.tables.append(table)
        section.notes.append(
            "`gpt-4o-mini` is only a name sent to the loopback server; litellm recognises it and "
            "computes a price for every reply, as it would for a hosted model."
        )

    return timed_section("overhead", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
