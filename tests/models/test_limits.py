import asyncio

import pytest
from virtual_loop import VirtualLoop

from titjudge.cache.store import CallCache
from titjudge.models.calls.limits import Limiter
from titjudge.models.calls.pacing import HEADROOM
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub


def test_starts_are_spaced_even_after_the_event_loop_stalls():
    loop = VirtualLoop()
    limiter = Limiter(concurrency=16, rpm=600, clock=loop.time)  # one start per 0.1 s
    starts: list[float] = []

    async def one():
        async with limiter.slot():
            starts.append(loop.time())

    async def main():
        tasks = [asyncio.create_task(one()) for _ in range(8)]
        await asyncio.sleep(0.01)
        loop.stall(0.5)  # the loop is blocked while five slots come due
        await asyncio.gather(*tasks)

    loop.run(main())
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    # No burst when the loop wakes: a limiter that let the five overdue starts go at once
    # shows gaps of 0 s. On the virtual clock (virtual_loop.py) every gap is exact: the first
    # start, the next one when the stall ends, then one spacing after another.
    assert len(starts) == 8 and gaps[0] == pytest.approx(0.51), gaps
    assert gaps[1:] == pytest.approx([0.1 / HEADROOM] * 6), gaps


def test_concurrency_caps_in_flight():
    loop = VirtualLoop()
    limiter = Limiter(concurrency=3, clock=loop.time)

    async def one():
        async with limiter.slot():
            await asyncio.sleep(0.01)

    async def main():
        await asyncio.gather(*(one() for _ in range(12)))

    loop.run(main())
    assert limiter.peak_in_flight == 3 and limiter.in_flight == 0


def test_run_concurrency_governs_api_models(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    hub = ModelHub(CallCache(None), default_concurrency=64)
    opts = ModelOptions(api_base="http://127.0.0.1:9/v1")
    assert hub.text_client("litellm:openai/a", opts).limiter.concurrency == 64
    own = ModelOptions(api_base="http://127.0.0.1:9/v1", concurrency=5)
    assert hub.text_client("litellm:openai/b", own).limiter.concurrency == 5
