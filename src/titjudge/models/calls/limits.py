"""Per-model limits, shared by every client of a model: requests in flight, requests and tokens
per minute, and pauses the provider asks for.

A request takes a slot (`Limiter.slot(tokens)`): a place among the requests in flight, the end
of any pause, then its turn under `rpm` (`pacing.Pacer`, cost 1) and under `tpm` (cost: the
request's token estimate at the usage / estimate ratio learnt so far). What it then learns is
reported on the `Grant`: the reply's real token usage (`settle`: the tpm budget is corrected to
it), or a 429 (`rate_limited`: the whole model pauses for the provider's Retry-After, the
refused request's tokens are given back; a configured rpm / tpm is paced a little slower, once
per round, and when neither is configured the number of requests in flight is cut; successes
grow it back: `pacing.AdaptiveWindow`). Starts are granted when they happen, so a stalled event
loop cannot release a burst.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from titjudge.models.calls.pacing import AdaptiveWindow, Pacer

#: the pause after a 429 that names no wait
DEFAULT_PAUSE = 1.0


class Grant:
    """One request's slot: what it was charged, and what it reports back."""

    def __init__(self, limiter: Limiter, tokens: int, started_round: int, charged: float = 0.0):
        self._limiter = limiter
        #: the request's token estimate, and what the tpm schedule was charged for it
        self.tokens, self.charged = tokens, charged
        self.started_round = started_round
        self.outcome: str | None = None

    def settle(self, used: int | None) -> None:
        """The reply arrived; `used` is its real token usage (None: not reported, the estimate
        stands)."""
        self.outcome = "ok"
        tpm = self._limiter.tpm_pacer
        if tpm is not None and used is not None:
            tpm.settle(self.tokens, self.charged, used)

    def rate_limited(self, retry_after: float | None) -> None:
        """The provider refused the request with a 429 (Retry-After `retry_after` seconds)."""
        self.outcome = "rate_limited"
        self._limiter.rate_limited(self, retry_after)


class _Gate:
    """A FIFO counting gate whose limit may change while requests wait."""

    def __init__(self, limit: int):
        self.limit = limit
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # granted, then cancelled: hand it on
                self.release()
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self.wake()

    def wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)


class Limiter:
    """A model's concurrency, `rpm`, `tpm` and pauses; adaptive when neither rate is given."""

    def __init__(
        self,
        concurrency: int,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.rpm, self.tpm = rpm, tpm
        self._clock = clock
        self.rpm_pacer = Pacer(rpm, clock) if rpm else None
        self.tpm_pacer = Pacer(tpm, clock) if tpm else None
        #: learnt from 429s when no rate is configured
        self.adaptive = None if rpm or tpm else AdaptiveWindow(concurrency)
        #: configured rates: bumped when a 429 slows them (`Pacer.slow_down`), once per round
        self._told_round = 0
        #: adaptive, after a 429: starts spread over a round trip (rate: window / mean latency)
        self._spread = Pacer(60.0, clock) if self.adaptive is not None else None
        self._latency: float | None = None
        #: adaptive, after a 429: one request at a time until one is answered (the window the
        #: cut left opens only then, so a pause does not end in a burst the server refuses)
        self._probing = False
        self._gate: _Gate | None = None
        self.paused_until = 0.0
        self.pauses = 0
        self.peak_in_flight = 0

    @property
    def in_flight(self) -> int:
        return self._gate.in_flight if self._gate is not None else 0

    def resize(self, concurrency: int) -> None:
        """Change the concurrency before the first call has taken a slot (later: ignored)."""
        if self._gate is None and concurrency >= 1:
            self.concurrency = concurrency
            if self.adaptive is not None:
                self.adaptive = AdaptiveWindow(concurrency)

    def _allowed(self) -> int:
        if self.adaptive is None:
            return self.concurrency
        return 1 if self._probing else self.adaptive.allowed

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[Grant]:
        """Wait for a place in flight, any pause, and the request's turn under rpm and tpm
        (charged `tokens`, its estimate); yields the `Grant` the request reports back on."""
        if self._gate is None:  # created lazily, in the loop that uses it
            self._gate = _Gate(self._allowed())
        gate = self._gate
        while True:  # a paused model's waiters hold no place, so a cut applies to them too
            await self._wait_pause()
            await gate.acquire()
            if self.paused_until <= self._clock():
                break
            gate.release()
        try:
            if self._spreading():
                assert self._spread is not None
                await self._spread.take(1.0)
            if self.rpm_pacer is not None:
                await self.rpm_pacer.take(1.0)
            charged = 0.0
            if self.tpm_pacer is not None:
                charged = self.tpm_pacer.charge_for(tokens)
                await self.tpm_pacer.take(charged)
            await self._wait_pause()  # a 429 may have paused the model meanwhile
        except BaseException:
            gate.release()
            raise
        self.peak_in_flight = max(self.peak_in_flight, gate.in_flight)
        started_round = self.adaptive.round if self.adaptive else self._told_round
        grant = Grant(self, tokens, started_round, charged)
        started = self._clock()
        try:
            yield grant
        finally:
            if grant.outcome == "ok" and self.adaptive is not None:
                self._succeeded(self._clock() - started)
            gate.release()

    def _spreading(self) -> bool:
        """Adaptive starts are spread over a round trip only once a 429 has cut the window: a
        server that never refuses gets a new request the moment one ends (spreading at
        window / mean latency from the first reply on cost a long-tailed run 1.7x-3x its ideal
        wall time, benchmarks/RESULTS.md section 10)."""
        return (
            self._spread is not None
            and self._latency is not None
            and self.adaptive is not None
            and self.adaptive.cuts > 0
        )

    def _succeeded(self, latency: float) -> None:
        """Adaptive: one more success grows the window; starts are spread at window / latency."""
        assert self.adaptive is not None and self._gate is not None and self._spread is not None
        self.adaptive.succeeded()
        self._probing = False
        self._gate.limit = self._allowed()
        known = self._latency
        self._latency = latency if known is None else 0.8 * known + 0.2 * latency
        self._spread.set_rate(self.adaptive.size / max(self._latency, 1e-3))

    async def _wait_pause(self) -> None:
        while (wait := self.paused_until - self._clock()) > 0:
            await asyncio.sleep(wait)

    def rate_limited(self, grant: Grant, retry_after: float | None) -> None:
        """A 429: pause the whole model, give the refused request's tokens back, and (adaptive)
        cut the number of requests in flight."""
        pause = DEFAULT_PAUSE if retry_after is None else max(0.0, retry_after)
        until = self._clock() + pause
        if until > self.paused_until:
            self.paused_until = until
            self.pauses += 1
            for pacer in (self._spread, self.rpm_pacer, self.tpm_pacer):
                if pacer is not None:
                    pacer.hold(until)
        if self.tpm_pacer is not None:
            self.tpm_pacer.refund(grant.charged)
        if grant.started_round == self._told_round and (self.rpm_pacer or self.tpm_pacer):
            self._told_round += 1  # the first 429 of a round slows the pace, later ones not
            for pacer in (self.rpm_pacer, self.tpm_pacer):
                if pacer is not None:
                    pacer.slow_down()
        if self.adaptive is not None and self.adaptive.rate_limited(grant.started_round):
            self._probing = True
            if self._gate is not None:
                self._gate.limit = self._allowed()
            if self._spread is not None and self._latency is not None:
                self._spread.set_rate(self.adaptive.size / max(self._latency, 1e-3))
