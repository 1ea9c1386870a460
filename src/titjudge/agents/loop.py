"""Run a coroutine to its end from synchronous code (the CLI, a notebook without a running
loop) so that Ctrl-C stops it at once.

`asyncio.run` answers Ctrl-C by cancelling the run (each call in flight is dropped; what was
answered is already in the cache, and the run's staging dir is removed), and then waits for
the worker threads of its default executor to finish: a local model being loaded (importing
torch alone takes seconds), a batch being computed, an image being decoded. Those threads
cannot be cancelled and nothing they return is wanted any more (the calls that asked for
it were cancelled, so none of it is stored), yet the wait delayed the stop by as long as they
ran: 5-26 s measured on `titjudge ablation` with the offline grid's local rows.

Here an interrupted run does not wait for them, and the CLI leaves the process without
joining them (`titjudge.cli.main`); the worker threads are named `titjudge-worker`.

Before the cancellation, the run stops sending and lets the requests already on the wire
come back, for at most `models.calls.drain.GRACE_SECONDS`: an answer the provider has given
is stored, not asked for (and paid for) again by the re-run. A second Ctrl-C stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from titjudge.models.calls.drain import for_loop

T = TypeVar("T")

#: the name prefix of the threads `asyncio.to_thread` runs work in under `run_to_end`
WORKER_PREFIX = "titjudge-worker"

_Base: type[asyncio.AbstractEventLoop] = (
    asyncio.ProactorEventLoop  # type: ignore[attr-defined,unused-ignore]
    if sys.platform == "win32"
    else asyncio.SelectorEventLoop
)


class _Loop(_Base):  # type: ignore[valid-type,misc]
    """The platform's event loop, except that once interrupted it does not wait for its
    worker threads when it closes."""

    interrupted = False

    async def shutdown_default_executor(self, *args: Any, **kwargs: Any) -> None:
        if not self.interrupted:
            await super().shutdown_default_executor(*args, **kwargs)


async def _drained(coro: Coroutine[Any, Any, T]) -> T:
    """`coro`, which a cancellation (the Runner's answer to Ctrl-C) reaches only once the
    requests on the wire are back or their grace is over (`models.calls.drain`)."""
    inner = asyncio.ensure_future(coro)
    try:
        return await asyncio.shield(inner)
    except asyncio.CancelledError:
        if not inner.done():
            await for_loop().settle()
            inner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await inner
        raise


def run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, except that Ctrl-C (after the answers on the wire are back and
    the run's own clean-up: cancelled calls, staging dir removed) raises KeyboardInterrupt
    without waiting for worker threads."""
    loop = _Loop()
    loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix=WORKER_PREFIX))
    with asyncio.Runner(loop_factory=lambda: loop) as runner:
        try:
            return runner.run(_drained(coro))
        except KeyboardInterrupt:
            loop.interrupted = True
            raise


__all__ = ["WORKER_PREFIX", "run_to_end"]
