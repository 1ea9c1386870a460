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
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

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


def run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, except that Ctrl-C (after the run's own clean-up: cancelled calls,
    staging dir removed) raises KeyboardInterrupt without waiting for worker threads."""
    loop = _Loop()
    loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix=WORKER_PREFIX))
    with asyncio.Runner(loop_factory=lambda: loop) as runner:
        try:
            return runner.run(coro)
        except KeyboardInterrupt:
            loop.interrupted = True
            raise


__all__ = ["WORKER_PREFIX", "run_to_end"]
