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
import signal
import sys
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
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
    """`coro`, which a cancellation (`run_to_end`'s answer to Ctrl-C) reaches only once the
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
    without waiting for worker threads; a second Ctrl-C raises it at once. (What
    `asyncio.Runner` does on Python 3.11 and later, written out: Python 3.10 has none.)"""
    loop = _Loop()
    loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix=WORKER_PREFIX))
    asyncio.set_event_loop(loop)
    task = loop.create_task(_drained(coro))

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if loop.interrupted or task.done():  # the second Ctrl-C: at once
            raise KeyboardInterrupt
        loop.interrupted = True
        loop.call_soon_threadsafe(task.cancel)

    ours = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if ours:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if loop.interrupted:
                raise KeyboardInterrupt from None
            raise
        except KeyboardInterrupt:
            loop.interrupted = True
            raise
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        _close(loop)


def _close(loop: _Loop) -> None:
    """`asyncio.run`'s clean-up: the tasks left cancelled and awaited, async generators
    closed, the worker threads joined (not once interrupted: see the module docstring)."""
    try:
        left = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


__all__ = ["WORKER_PREFIX", "run_to_end"]
