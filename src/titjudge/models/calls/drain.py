"""Answers on their way when a run is interrupted: kept, not paid for twice.

A Ctrl-C used to cancel every call at once. A request the provider had already answered,
whose reply sat in the socket or was being parsed while the client was busy, was dropped
with the rest: the provider had done (and billed) the work, and the re-run asked for it
again (a loaded machine lost one in most interrupted runs of the interrupt test, its reply
finished 50-100 ms before the signal). Now the run first stops sending, lets the requests
already on the wire come back for up to `GRACE_SECONDS` (each stored as it lands), and only
then cancels what is left; a second Ctrl-C stops at once.

One `Drain` per event loop, shared by every client of the run (`for_loop`): the sender counts
each request while it is on the wire (`sending`) and, once the run is stopping, parks a new
one until the cancellation reaches it (`park`). `run.loop.run_to_end` drives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Iterator

#: how long an interrupted run waits for the requests already on the wire
GRACE_SECONDS = 2.0


class Drain:
    """The requests of one event loop on the wire, and whether the run is stopping."""

    def __init__(self) -> None:
        self.on_wire = 0
        self.stopping = False
        self._idle: asyncio.Event | None = None
        self._never: asyncio.Event | None = None

    @contextlib.contextmanager
    def sending(self) -> Iterator[None]:
        """Around one request on the wire: counted until its reply (or error) is back."""
        self.on_wire += 1
        try:
            yield
        finally:
            self.on_wire -= 1
            if self.on_wire == 0 and self._idle is not None:
                self._idle.set()

    async def park(self) -> None:
        """A request about to be sent while the run is stopping: it waits for the
        cancellation that ends the run, and is never sent."""
        if self._never is None:
            self._never = asyncio.Event()
        await self._never.wait()

    async def settle(self, grace: float | None = None) -> int:
        """Stop sending, then wait until no request is on the wire, at most `grace` seconds
        (default `GRACE_SECONDS`); returns how many were still on it when the wait ended."""
        self.stopping = True
        if self.on_wire:
            self._idle = asyncio.Event()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._idle.wait(), GRACE_SECONDS if grace is None else grace)
        return self.on_wire


_DRAINS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Drain] = weakref.WeakKeyDictionary()


def for_loop(loop: asyncio.AbstractEventLoop | None = None) -> Drain:
    """The drain of `loop` (default: the running one), made on first use."""
    loop = loop or asyncio.get_running_loop()
    found = _DRAINS.get(loop)
    if found is None:
        found = _DRAINS[loop] = Drain()
    return found


__all__ = ["GRACE_SECONDS", "Drain", "for_loop"]
