"""The asyncio micro-batcher the local backends (`hf:`, `embed:`) share: it turns concurrent
calls into batches run one at a time in a worker thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


@dataclass
class _Pending(Generic[ItemT, ResultT]):
    key: Hashable
    item: ItemT
    future: asyncio.Future[ResultT]


class MicroBatcher(Generic[ItemT, ResultT]):
    """Coalesce concurrent `submit` calls into batches run one at a time in a worker thread.

    A drain task takes up to `max_items` pending items sharing the oldest item's key (items
    with different keys cannot share a forward pass), waiting `max_wait` seconds first when
    fewer are queued. `run(key, items)` runs via `asyncio.to_thread`, so the event loop keeps
    serving; while it runs, new items queue up for the next batch. `run` returns one result
    per item, or an exception instance for an item that failed alone. Items whose caller was
    cancelled (a timeout) before their batch started are dropped.
    """

    def __init__(
        self,
        run: Callable[[Hashable, list[ItemT]], list[ResultT | BaseException]],
        max_items: int,
        max_wait: float = 0.005,
    ):
        if max_items < 1:
            raise ValueError("max_items must be >= 1")
        self._run = run
        self.max_items = max_items
        self.max_wait = max_wait
        self._pending: list[_Pending[ItemT, ResultT]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drain_task: asyncio.Task[None] | None = None
        self._thread_lock = threading.Lock()  # one batch at a time even across event loops
        #: sizes of the batches run so far (for tests and benchmarks)
        self.batch_sizes: list[int] = []

    async def submit(self, item: ItemT, key: Hashable = None) -> ResultT:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (e.g. a second asyncio.run): start afresh
            self._loop, self._pending, self._drain_task = loop, [], None
        future: asyncio.Future[ResultT] = loop.create_future()
        self._pending.append(_Pending(key, item, future))
        if self._drain_task is None or self._drain_task.done():
            self._drain_task = loop.create_task(self._drain())
        return await future

    def _take_batch(self) -> tuple[Hashable, list[_Pending[ItemT, ResultT]]]:
        self._pending = [p for p in self._pending if not p.future.done()]
        if not self._pending:
            return None, []
        key = self._pending[0].key
        batch = [p for p in self._pending if p.key == key][: self.max_items]
        taken = {id(p) for p in batch}
        self._pending = [p for p in self._pending if id(p) not in taken]
        return key, batch

    def _run_locked(self, key: Hashable, items: list[ItemT]) -> list[ResultT | BaseException]:
        with self._thread_lock:
            return self._run(key, items)

    async def _drain(self) -> None:
        try:
            while self._pending:
                if len(self._pending) < self.max_items and self.max_wait > 0:
                    await asyncio.sleep(self.max_wait)
                key, batch = self._take_batch()
                if not batch:
                    continue
                self.batch_sizes.append(len(batch))
                try:
                    results = await asyncio.to_thread(
                        self._run_locked, key, [p.item for p in batch]
                    )
                    if len(results) != len(batch):
                        raise RuntimeError(
                            f"batch returned {len(results)} results for {len(batch)} items"
                        )
                except Exception as exc:  # the whole batch failed: every caller sees the error
                    for pending in batch:
                        if not pending.future.done():
                            pending.future.set_exception(exc)
                    continue
                for pending, result in zip(batch, results, strict=True):
                    if pending.future.done():
                        continue
                    if isinstance(result, BaseException):
                        pending.future.set_exception(result)
                    else:
                        pending.future.set_result(result)
        except asyncio.CancelledError:
            for pending in self._pending:
                pending.future.cancel()
            self._pending = []
            raise
