"""In-process dedup: one computation per sharing key at a time.

A call's positions are shared by their sharing key (`models.calls.keys`): within the call,
repeats of a key share its first position's answer; across calls of this process, a key
already in flight is not asked again, its askers wait for that answer. An answer reaches its
waiters the moment its own position is settled, not once the whole call is done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from titjudge.records.calls import CallResult

Future = asyncio.Future[CallResult[Any]]


@dataclass
class Shares:
    """One call's share of the keys in flight: what it answers, what it waits for."""

    #: sharing key -> this call's positions with it (the first is computed, the rest share it)
    owned: dict[str, list[int]] = field(default_factory=dict)
    #: position -> the answer of another call in flight with its key
    waiting: dict[int, Future] = field(default_factory=dict)
    _futures: dict[str, Future] = field(default_factory=dict)
    _book: dict[str, Future] = field(default_factory=dict)

    def settle(self, shared: str, result: CallResult[Any]) -> None:
        """`shared` is answered: its waiters in this process get `result` now."""
        future = self._futures[shared]
        if self._book.get(shared) is future:
            del self._book[shared]
        future.set_result(result)

    def abandon(self, exc: BaseException) -> None:
        """The call failed as a whole (cancelled, the cache unusable): every waiter not yet
        answered gets `exc` to raise itself."""
        for future in self._futures.values():
            if not future.done():
                future.set_exception(exc)
                future.exception()  # retrieved: the waiters re-raise it themselves

    def close(self) -> None:
        """This call is over: none of its keys is in flight from it any more."""
        for shared, future in self._futures.items():
            if self._book.get(shared) is future:
                del self._book[shared]


class InFlight:
    """The keys being answered in this process (one book per model client)."""

    def __init__(self) -> None:
        self._futures: dict[str, Future] = {}

    def share(self, keys: Sequence[str]) -> Shares:
        """Position i of a call asks for sharing key `keys[i]`: which positions this call
        answers, and which wait for another call's answer."""
        shares = Shares(_book=self._futures)
        loop = asyncio.get_running_loop()
        for i, shared in enumerate(keys):
            if shared in shares.owned:
                shares.owned[shared].append(i)
            elif shared in self._futures:
                shares.waiting[i] = self._futures[shared]
            else:
                shares.owned[shared] = [i]
                shares._futures[shared] = self._futures[shared] = loop.create_future()
        return shares

    def __contains__(self, shared: str) -> bool:
        return shared in self._futures


__all__ = ["InFlight", "Shares"]
