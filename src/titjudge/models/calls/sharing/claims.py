"""Cross-process claims: two runs sharing a cache dir never send one request twice.

Before a miss is computed its cache key is claimed in the cache (`CallCache.claim`, with a
time to live long enough for every attempt the call may make); a key another run holds is
waited on until that run stores its answer, or lets the claim go without one (then it is
free to take). A claim is released once the answer is stored, so a waiter finds it. A
backend whose calls are not cached (`cacheable` False) claims nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from titjudge.cache.store import CallCache
from titjudge.models.core.options import ModelOptions
from titjudge.records.calls import CallResult

#: how often a waiter looks for the other run's answer
CLAIM_POLL_SECONDS = 0.05

#: a cached entry as a result, or None when there is none or it cannot be used
Accept = Callable[[Any], CallResult[Any] | None]


class Claims:
    """The claims one model client takes on its cache keys."""

    def __init__(
        self,
        cache: CallCache,
        options: ModelOptions,
        cacheable: Callable[[], bool],
        poll: float = CLAIM_POLL_SECONDS,
    ):
        self.cache = cache
        self.options = options
        self.cacheable = cacheable
        self.poll = poll

    def take(self, key: str) -> bool:
        """Whether this run now holds `key` (True when nothing is cached at all)."""
        if not self.cacheable():
            return True
        options = self.options
        ttl = (options.timeout + options.backoff_max) * options.max_attempts
        return self.cache.claim(key, ttl)

    def release(self, key: str) -> None:
        """Let `key` go (after its answer, if any, is stored)."""
        if self.cacheable():
            self.cache.release(key)

    async def wait(self, key: str, accept: Accept) -> CallResult[Any] | None:
        """Another run holds `key`: its answer once stored, or None once it let go without one."""
        while True:
            await asyncio.sleep(self.poll)
            found = accept(self.cache.peek(key))
            if found is not None:
                return found
            if not self.cache.claimed_elsewhere(key):
                return None


__all__ = ["CLAIM_POLL_SECONDS", "Accept", "Claims"]
