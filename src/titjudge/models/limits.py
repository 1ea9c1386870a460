"""Per-model concurrency and requests-per-minute limits, shared by every client of a model.

RPM is enforced by spacing request starts at least 60/rpm seconds apart (a smooth
schedule rather than bursts, so a provider's sliding window never sees a spike), and a
start is granted only when it happens, so a stalled event loop cannot release a burst.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType


class Limiter:
    def __init__(self, concurrency: int, rpm: float | None = None):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.rpm = rpm
        self._interval = 60.0 / rpm if rpm else 0.0
        self._semaphore: asyncio.Semaphore | None = None
        self._lock: asyncio.Lock | None = None
        self._next_start = 0.0
        self.in_flight = 0
        self.peak_in_flight = 0

    def resize(self, concurrency: int) -> None:
        """Change the concurrency before the first call has taken a slot (later: ignored)."""
        if self._semaphore is None and concurrency >= 1:
            self.concurrency = concurrency

    def _ensure(self) -> None:
        # created lazily so a Limiter can be built outside the event loop that uses it
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.concurrency)
            self._lock = asyncio.Lock()

    async def __aenter__(self) -> Limiter:
        self._ensure()
        assert self._semaphore is not None and self._lock is not None
        await self._semaphore.acquire()
        try:
            if self._interval:
                await self._take_slot()
        except BaseException:
            self._semaphore.release()
            raise
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return self

    async def _take_slot(self) -> None:
        """Claim a start time when actually starting. Slots handed out in advance would
        all come due together after an event-loop stall and go out as one burst."""
        assert self._lock is not None
        while True:
            async with self._lock:
                now = time.monotonic()
                if now >= self._next_start:
                    self._next_start = now + self._interval
                    return
                wait = self._next_start - now
            await asyncio.sleep(wait)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.in_flight -= 1
        assert self._semaphore is not None
        self._semaphore.release()
