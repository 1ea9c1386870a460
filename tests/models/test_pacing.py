"""Pacing a model's requests: rpm and tpm schedules, pauses on 429, and a concurrency learnt
from 429s when no rate is given. Limiters run on a virtual clock (virtual_loop.py): start
times are exact and no test sleeps."""

import asyncio
import io

import pytest
from PIL import Image
from virtual_loop import VirtualLoop

from titjudge.models.calls.limits import Limiter
from titjudge.models.calls.pacing import GROWTH_ROUNDS, HEADROOM, AdaptiveWindow, Pacer
from titjudge.models.calls.token_estimate import openai_image_tokens, request_tokens
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.records.image_input import ImageInput
from titjudge.records.spec import parse_model_spec


def most_in_window(times, window):
    times, peak, start = sorted(times), 0, 0
    for end, moment in enumerate(times):
        while moment - times[start] >= window:
            start += 1
        peak = max(peak, end - start + 1)
    return peak


def test_rpm_never_exceeds_any_window_and_keeps_its_pace():
    loop = VirtualLoop()
    limiter = Limiter(concurrency=64, rpm=1200, clock=loop.time)  # 20 per second
    starts: list[float] = []

    async def one():
        async with limiter.slot():
            starts.append(loop.time())

    async def main():
        await asyncio.gather(*(one() for _ in range(45)))

    loop.run(main())
    for window in (0.25, 0.5, 1.0, 2.0):  # a provider may count over any window
        # the pace (97%), half a spacing of lateness kept, and the window's own edge
        assert most_in_window(starts, window) <= HEADROOM * 20 * window + 1.5, window
    assert most_in_window(starts, 2.0) <= 40  # within the limit over 40 starts' length
    span = max(starts) - min(starts)
    assert 44 / span == pytest.approx(20 * HEADROOM)  # the pace, while requests wait


def test_a_late_wake_keeps_the_schedule_a_stall_restarts_it():
    pacer = Pacer(600, clock=lambda: 0.0)  # spacing 0.1 / HEADROOM
    spacing = 0.1 / HEADROOM
    pacer.grant(0.0, 1)
    pacer.grant(spacing + 0.005, 1)  # woken 5 ms late: the next start stays on schedule
    assert pacer.due_in(0.0) == pytest.approx(2 * spacing)
    pacer.grant(5.0, 1)  # a stall: no burst afterwards, the schedule restarts from the start
    assert pacer.due_in(5.0) == pytest.approx(spacing)


def test_tpm_blocks_a_request_whose_estimate_does_not_fit_and_usage_frees_the_rest():
    pacer = Pacer(6000, clock=lambda: 0.0)  # 100 x HEADROOM tokens per second
    rate = 100 * HEADROOM
    pacer.grant(0.0, rate)  # one second's worth estimated
    assert pacer.due_in(0.0) == pytest.approx(1.0)
    pacer.refund(rate * 0.75)  # the reply used a quarter of its estimate
    assert pacer.due_in(0.0) == pytest.approx(0.25)

    loop = VirtualLoop()
    limiter = Limiter(concurrency=8, tpm=60_000, clock=loop.time)  # 980 tokens per second
    starts: dict[str, float] = {}

    async def first():
        async with limiter.slot(980) as grant:  # a whole second's worth reserved
            starts["first"] = loop.time()
            await asyncio.sleep(0.1)
            grant.settle(98)  # it used a tenth: the rest is free at once

    async def second():
        await asyncio.sleep(0.01)
        async with limiter.slot(10):
            starts["second"] = loop.time()

    async def main():
        await asyncio.gather(first(), second())

    loop.run(main())
    waited = starts["second"] - starts["first"]
    # blocked until the usage came back at 0.1 s (and its own 10 tokens), not the full second
    assert waited == pytest.approx(0.1, abs=0.002)


def test_a_request_refused_with_429_gives_its_tokens_back():
    loop = VirtualLoop()
    limiter = Limiter(concurrency=4, tpm=60_000, clock=loop.time)

    async def main():
        async with limiter.slot(9800) as grant:  # ten seconds' worth
            grant.rate_limited(0.0)
        t0 = loop.time()
        async with limiter.slot(10):
            return loop.time() - t0

    assert loop.run(main()) == 0.0


def test_aimd_halves_on_a_429_once_per_round_and_grows_back():
    window = AdaptiveWindow(16)
    assert window.rate_limited(started_round=0) and window.allowed == 8
    assert not window.rate_limited(started_round=0)  # sent before the cut: no second cut
    assert window.allowed == 8
    for _ in range(400):
        window.succeeded()
    assert window.allowed == 16  # additive increase back to the configured concurrency
    grown = AdaptiveWindow(16)
    grown.rate_limited(0)
    for _ in range(GROWTH_ROUNDS * 8 - 2):
        grown.succeeded()
    assert grown.allowed == 8
    for _ in range(4):
        grown.succeeded()
    assert grown.allowed == 9  # about one more per GROWTH_ROUNDS windows' worth of successes


def test_a_429_caps_requests_in_flight_when_no_rate_is_configured():
    loop = VirtualLoop()
    limiter = Limiter(concurrency=16, clock=loop.time)
    seen: list[tuple[int, int]] = []  # (in flight, allowed) at each start after the cut

    async def one(i):
        async with limiter.slot() as grant:
            await asyncio.sleep(0.02)
            if i == 0:
                grant.rate_limited(0.0)
            else:
                seen.append((limiter.in_flight, limiter.adaptive.allowed))
                grant.settle(None)

    async def main():
        await one(0)
        await asyncio.gather(*(one(i) for i in range(1, 40)))

    loop.run(main())
    assert all(in_flight <= allowed for in_flight, allowed in seen)
    assert max(in_flight for in_flight, _ in seen[:8]) == 8  # the first wave: halved from 16
    assert max(in_flight for in_flight, _ in seen) < 16  # grown back slowly, one per round
    told = Limiter(concurrency=16, rpm=6000, clock=loop.time)
    assert told.adaptive is None  # a configured rate is not second-guessed


def test_after_a_429_one_request_goes_alone_until_it_is_answered():
    """No rate configured: when the pause a 429 asked for ends, one request probes the server
    and the window the cut left opens only once it is answered (opening it at once sent a
    burst the server refused again: 5.1% of a tpm-limited run's requests came back 429)."""
    loop = VirtualLoop()
    limiter = Limiter(concurrency=16, clock=loop.time)
    events: list[tuple[str, int]] = []  # ("start" | "answered", request)

    async def one(i, seconds=0.05):
        async with limiter.slot() as grant:
            events.append(("start", i))
            await asyncio.sleep(seconds)
            if i == 0:
                grant.rate_limited(0.05)
            else:
                events.append(("answered", i))
                grant.settle(None)

    async def main():
        await one(0)
        await asyncio.gather(*(one(i) for i in range(1, 12)))

    loop.run(main())
    after_cut = events[1:]
    probe = after_cut[0][1]
    assert after_cut[:2] == [("start", probe), ("answered", probe)]  # the probe goes alone
    starts_before_second_answer = [e for e in after_cut[2:] if e[0] == "start"][
        : limiter.adaptive.allowed
    ]
    assert len(starts_before_second_answer) == 8  # then the halved window opens at once


def test_without_a_429_a_freed_place_starts_the_next_request_at_once():
    """No rate configured and no 429 yet: the limiter is work-conserving. Spreading starts at
    window / mean latency from the first reply on made a long-tailed run (median 2 s, p95 8 s)
    take 1.7x its ideal at concurrency 128 and 3x at 256: after one slow reply, every start
    waited its turn though places were free."""
    loop = VirtualLoop()
    limiter = Limiter(concurrency=2, clock=loop.time)

    async def call(seconds):
        async with limiter.slot() as grant:
            await asyncio.sleep(seconds)
            grant.settle(None)

    async def main():
        await call(1.0)  # one slow reply: the mean latency is now 1 s (2 starts/s if spread)
        started = loop.time()
        await asyncio.gather(*(call(0.01) for _ in range(20)))
        return loop.time() - started

    # 10 turns of 0.01 s at 2 places; spread, 20 starts at 2/s would take ~10 s
    assert loop.run(main()) == pytest.approx(0.1)


def test_retry_after_pauses_the_whole_model():
    loop = VirtualLoop()
    limiter = Limiter(concurrency=8, clock=loop.time)
    starts: list[float] = []

    async def refused():
        async with limiter.slot() as grant:
            grant.rate_limited(0.3)
        return loop.time()

    async def other():
        await asyncio.sleep(0.02)
        async with limiter.slot():
            starts.append(loop.time())

    async def main():
        return await asyncio.gather(refused(), *(other() for _ in range(3)))

    paused_at = loop.run(main())[0]
    assert len(starts) == 3 and min(starts) - paused_at == pytest.approx(0.3)


def test_tpm_is_a_validated_model_option():
    assert ModelOptions(tpm=200_000).tpm == 200_000
    with pytest.raises(ValueError):
        ModelOptions(tpm=0)


def test_token_estimate_counts_text_images_and_the_output_cap():
    buf = io.BytesIO()
    Image.new("RGB", (1024, 1024)).save(buf, format="PNG")
    image = ImageInput(data=buf.getvalue())
    request = GenerateRequest(prompt="x" * 350, images=(image,), max_tokens=512)
    openai = request_tokens(request, parse_model_spec("litellm:openai/gpt-4o"))
    assert openai == 100 + 4 + 3 + 765 + 512  # 1024x1024 -> 768x768: 4 tiles (OpenAI's example)
    gemini = request_tokens(request, parse_model_spec("litellm:gemini/gemini-2.5-pro"), 1536)
    assert gemini == 100 + 4 + 3 + 258 * 4 + 1536  # 768x768 tiles of 258 tokens
    assert openai_image_tokens(2048, 4096) == 85 + 170 * 6  # 768x1536: 2 x 3 tiles
