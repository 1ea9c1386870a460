"""Pacing a model's requests: a per-minute budget of requests or tokens, and, when no budget is
known, a concurrency learnt from the provider's 429s.

`Pacer` spends a per-minute budget on an even schedule (a cell-rate schedule: each start moves
the next allowed start on by cost / rate). Requests cost 1 under `rpm`; under `tpm` a request
is charged its token estimate scaled by the usage / estimate ratio learnt from earlier replies
(`charge_for`: the estimate reserves the whole output cap, which replies rarely use), and each
reply's real usage is settled afterwards (`settle`), so the budget follows what the provider
counted. Charged the whole estimate, most of the schedule's time came back only once the
reply had arrived, when the schedule had already passed the point it could move back to, and
was lost (a told tpm client reached 85% of the limit). A 429 despite the configured rate (the
provider counts more than the schedule: output caps held while requests are in flight, a
window shorter than a minute) slows the pace by `TOLD_DECREASE` (`slow_down`), and a pause
holds the schedule until it ends (`hold`). The schedule is its own anchor: a start woken a
little late (by at most half its own spacing) does not push the ones after it back, so
event-loop latency is not lost, while a longer stall restarts the schedule instead of
releasing a burst.
The pace is `HEADROOM` of the limit: any window of W seconds then holds at most
HEADROOM x rate x W + 1.5 starts (the pace, half a spacing kept, the window's edge) as the
client grants them; the provider counts arrivals, which the client's own work between grant
and send (building the request, a busy event loop) shifts by up to ~0.1 s, a few starts more
in a short window. At 98% one such shift in a run 10 windows of 5 s long met a 429, whose
pause cost 4% of the run (RESULTS.md section 1b); 97% leaves room for it once the window is
100 starts long (3.3 s at 1,800 rpm, 60 s at 100 rpm). Under tpm the window may also hold one
request partly charged before it.

`AdaptiveWindow` is additive-increase / multiplicative-decrease on the number of requests in
flight: halved on a 429 (once per round: 429s of requests sent before the last cut do not cut
again), grown by one per `GROWTH_ROUNDS` windows' worth of successes (about that many round
trips: a provider's window is seconds to a minute long, many round trips, so growing by one
per round trip found the limit again within a second or two and paid a 429 for it each
time), up to the configured concurrency. The limiter spreads those starts over a round trip
(window / mean latency per second), so the requests a pause held back do not all go out at
once when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

#: the share of a configured rpm / tpm that is paced for
HEADROOM = 0.97
#: how late (as a share of one start's own spacing) a start may be woken and still keep the
#: schedule; later than that, the schedule restarts from the late start
LATENESS = 0.5
#: the cut on a 429 and the floor of the learnt window
DECREASE = 0.5
MIN_WINDOW = 1.0
#: round trips' worth of successes per +1 of the learnt window
GROWTH_ROUNDS = 4
#: a 429 despite a configured rate: the cut of the pace (once per round) and the lowest pace
TOLD_DECREASE = 0.99
TOLD_FLOOR = 0.5
#: the weight of one settled reply in the learnt usage / estimate ratio, and its bounds
USAGE_WEIGHT = 0.2
USAGE_RATIO_MIN, USAGE_RATIO_MAX = 0.1, 2.0


class Pacer:
    """At most `per_minute` x HEADROOM units per minute, spent evenly; FIFO among waiters."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic):
        if per_minute <= 0:
            raise ValueError("a per-minute limit must be positive")
        self.per_minute = per_minute
        self.rate = per_minute * HEADROOM / 60.0  # units per second
        self._clock = clock
        self._next = -float("inf")  # when the next start is due (the schedule's anchor)
        #: settled usage / estimate (`settle`), what starts are charged at (`charge_for`)
        self.usage_ratio = 1.0
        self._lock: asyncio.Lock | None = None
        self._changed: asyncio.Event | None = None

    def charge_for(self, estimate: float) -> float:
        """What a start estimated at `estimate` units is charged: the estimate scaled by the
        usage / estimate ratio learnt from settled replies (the whole estimate until one)."""
        return estimate * self.usage_ratio

    def settle(self, estimate: float, charged: float, used: float) -> None:
        """A reply estimated at `estimate`, charged `charged`, used `used`: the schedule is
        corrected to the usage, and the ratio later starts are charged at learns from it."""
        self.refund(charged - used)
        if estimate > 0:
            ratio = self.usage_ratio + USAGE_WEIGHT * (used / estimate - self.usage_ratio)
            self.usage_ratio = min(USAGE_RATIO_MAX, max(USAGE_RATIO_MIN, ratio))

    def slow_down(self) -> None:
        """The provider refused a start paced within the configured limit, so it counts more
        than this schedule does (e.g. the output caps of the requests in flight, held against
        a window shorter than a minute): pace `TOLD_DECREASE` slower from now on, down to
        `TOLD_FLOOR` of the limit."""
        self.rate = max(self.per_minute * TOLD_FLOOR / 60.0, self.rate * TOLD_DECREASE)

    def set_rate(self, per_second: float) -> None:
        """Pace at `per_second` units from now on (a learnt rate: no headroom taken)."""
        self.rate = per_second

    def due_in(self, now: float) -> float:
        """Seconds until a start is allowed (0: now)."""
        return max(0.0, self._next - now)

    def grant(self, now: float, cost: float) -> None:
        """Record a start at `now` costing `cost` units: the next start is due cost / rate
        after the due time this one kept (or after `now`, when it came later than allowed)."""
        spacing = cost / self.rate
        late = now - self._next
        anchor = self._next if 0.0 <= late <= LATENESS * spacing else max(self._next, now)
        self._next = anchor + spacing

    def hold(self, until: float) -> None:
        """No start before `until` (a pause): the schedule resumes from there at its pace,
        so the starts it would have granted meanwhile do not all go out when the pause ends."""
        if until > self._next:
            self._next = until
            if self._changed is not None:
                self._changed.set()

    def refund(self, units: float) -> None:
        """Give back `units` charged but not spent (negative: charge more), e.g. a reply that
        used fewer tokens than its estimate, or a request the provider refused unserved."""
        if units == 0:
            return
        self._next -= units / self.rate
        if self._changed is not None:
            self._changed.set()

    async def take(self, cost: float = 1.0) -> None:
        """Wait for this request's turn and charge it `cost` units."""
        if self._lock is None:  # created lazily, in the loop that uses them
            self._lock, self._changed = asyncio.Lock(), asyncio.Event()
        assert self._changed is not None
        async with self._lock:  # one waiter sleeps at a time, the others queue behind it
            while (wait := self.due_in(self._clock())) > 0:
                self._changed.clear()
                # a refund may bring the due time forward: wake for it
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), wait)
            self.grant(self._clock(), cost)


class AdaptiveWindow:
    """How many requests may be in flight, learnt from 429s (AIMD), between 1 and `ceiling`."""

    def __init__(self, ceiling: int):
        self.ceiling = ceiling
        self.size = float(ceiling)
        #: bumped on every cut; a request remembers the round it started in
        self.round = 0
        self.cuts = 0

    @property
    def allowed(self) -> int:
        return max(1, int(self.size))

    def succeeded(self) -> None:
        """One success: +1 per `GROWTH_ROUNDS` windows' worth of successes."""
        self.size = min(float(self.ceiling), self.size + 1.0 / (GROWTH_ROUNDS * self.size))

    def rate_limited(self, started_round: int) -> bool:
        """A 429 for a request started in `started_round`; True when it cut the window (the
        first 429 of the current round: those of requests sent before the cut do not count)."""
        if started_round != self.round:
            return False
        self.size = max(MIN_WINDOW, self.size * DECREASE)
        self.round += 1
        self.cuts += 1
        return True
