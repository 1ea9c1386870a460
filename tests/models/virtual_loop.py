"""An asyncio event loop on a virtual clock, for the limiter and pacing tests.

The limiter (`titjudge.models.calls.limits.Limiter`) and its pacers read an injectable clock
and wait with `asyncio.sleep` / `asyncio.wait_for`. Run on this loop with `clock=loop.time`,
they see time pass only when every task waits: the loop then moves the clock straight to
its next timer instead of sleeping. A test reads exact start times, whatever the machine's
load (a late wake-up on a busy machine cannot shrink or stretch a gap), and sleeps no real
time. `stall(seconds)` moves the clock while the loop runs nothing, as a callback that
blocks the loop would.

    loop = VirtualLoop()
    limiter = Limiter(concurrency=4, rpm=600, clock=loop.time)
    loop.run(main())
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _Selector(selectors.DefaultSelector):
    """Polls without blocking; when nothing is ready, the wait the loop asked for passes on
    the virtual clock at once."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = super().select(0)
        if not ready and timeout is not None and timeout > 0:
            self.now += timeout
        elif not ready and timeout is None:
            raise RuntimeError("every task waits and no timer is due: it would wait forever")
        return ready


class VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._virtual = _Selector()
        super().__init__(self._virtual)

    def time(self) -> float:
        return self._virtual.now

    def stall(self, seconds: float) -> None:
        """The loop blocked for `seconds` (call it from a task, between awaits)."""
        self._virtual.now += seconds

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run `main` to its end, then close the loop."""
        asyncio.set_event_loop(self)
        try:
            return self.run_until_complete(main)
        finally:
            asyncio.set_event_loop(None)
            self.close()
