"""The one call pipeline every model call goes through, whatever it asks for.

in-process dedup -> cache lookup (or a batch job's answer, or a cache probe's miss) ->
cross-process claim -> the send (`models.calls.sending`: limits, budget, retries, timeout,
breaker) -> validate -> cache store.

A call kind (free text and validated objects in `models.calls.text_client`, embeddings in
`models.calls.embedding_client`) supplies only what differs: the keys of what it asks, how a cached
entry becomes a result (or is unusable), and how the missing answers are computed and
validated. A call never raises for a model problem: it returns a `CallResult` whose `ok` is
False and whose `error` says why. Only validated results are stored, so a bad answer is asked
again next run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

from titjudge.cache.store import CallCache
from titjudge.models.calls.breaker import Breaker
from titjudge.models.calls.budget import Budget
from titjudge.models.calls.limits import Limiter
from titjudge.models.calls.probe import Answers, Computed
from titjudge.models.calls.sending import Attempted, Sender, Worst
from titjudge.models.core.base import Backend
from titjudge.models.core.clients import CallMode
from titjudge.models.core.options import DEFAULT_STOP_AFTER, ModelOptions
from titjudge.models.core.prices import Rates
from titjudge.records.calls import CallResult, Usage

B = TypeVar("B", bound=Backend)
R = TypeVar("R")

CLAIM_POLL_SECONDS = 0.05

#: a cached entry as a result, or None when there is none or it cannot be used
Accept = Callable[[Any], CallResult[Any] | None]
#: computes the answers at the given positions of a call, in order, from a batch job's
#: `Answers` where given (None: sent online)
Compute = Callable[[list[int], Answers | None], Awaitable[list[Computed]]]


class CallPipeline(Generic[B]):
    """Caching, claims, limits, retries and timeouts for one backend, shared by every kind."""

    def __init__(
        self,
        backend: B,
        cache: CallCache,
        limiter: Limiter,
        options: ModelOptions,
        stop_after: int = DEFAULT_STOP_AFTER,
    ):
        self.backend = backend
        self.cache = cache
        self.limiter = limiter
        self.options = options
        self.usage: dict[str, Usage] = {}
        self._inflight: dict[str, asyncio.Future[CallResult[Any]]] = {}
        #: retries, limits, budget and breaker of every request this client sends
        self.sender = Sender(backend, limiter, options, stop_after)
        #: answers (and failures) batch jobs gave this run, by cache key
        #: (`models.calls.batch.collect`)
        self.batch_answers: dict[str, CallResult[Any]] = {}
        #: the calls that failed in this run, by sharing key: an identical request is not sent
        #: again in this run (every item that needs it shares the failure, as it would share an
        #: answer); a re-run, with a new pipeline, asks again
        self.failed: dict[str, CallResult[Any]] = {}

    @property
    def model(self) -> str:
        return str(self.backend.spec)

    # ------------------------------------------------------------------ dedup and cache

    async def _run(
        self,
        role: str,
        keys: Sequence[tuple[str, str]],
        accept: Accept,
        compute: Compute,
        probe: CallMode | None = None,
    ) -> list[CallResult[Any]]:
        """One result per (cache key, sharing key), in order. Positions with a sharing key
        already in flight in this process wait for that answer; repeats share the first.
        `probe`: the call's mode (`models.calls.probe`); None answers, computing misses."""
        results: list[CallResult[Any] | None] = [None] * len(keys)
        waiting: dict[int, asyncio.Future[CallResult[Any]]] = {}
        owned: dict[str, list[int]] = {}
        futures: dict[str, asyncio.Future[CallResult[Any]]] = {}
        for i, (_, shared) in enumerate(keys):
            if shared in owned:
                owned[shared].append(i)
            elif shared in self._inflight:
                waiting[i] = self._inflight[shared]
            else:
                owned[shared] = [i]
                futures[shared] = asyncio.get_running_loop().create_future()
                self._inflight[shared] = futures[shared]

        def settle(i: int) -> None:
            """Position `i` is answered: its waiters in this process get it now, not once the
            whole call is done (a cache hit next to a computed text is a hit for them too)."""
            shared = keys[i][1]
            if self._inflight.get(shared) is futures[shared]:
                del self._inflight[shared]
            futures[shared].set_result(_present(results[i]))

        try:
            firsts = [positions[0] for positions in owned.values()]
            if firsts:
                await self._answer(keys, firsts, accept, compute, results, settle, probe)
            for positions in owned.values():
                first = _present(results[positions[0]])
                for i in positions[1:]:
                    results[i] = dataclasses.replace(first, cached=True)
        except BaseException as exc:
            for future in futures.values():
                if not future.done():
                    future.set_exception(exc)
                    future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            for shared, future in futures.items():
                if self._inflight.get(shared) is future:
                    del self._inflight[shared]
        for i, future in waiting.items():
            results[i] = dataclasses.replace(await asyncio.shield(future), cached=True)
        final = [_present(result) for result in results]
        ledger = self.usage.setdefault(role, Usage())
        if probe is not None:
            probe.count(ledger, final, model=self.model, role=role)
        else:
            for result in final:
                ledger.add(result)
        return final

    async def _answer(
        self,
        keys: Sequence[tuple[str, str]],
        positions: list[int],
        accept: Accept,
        compute: Compute,
        results: list[CallResult[Any] | None],
        settle: Callable[[int], None],
        probe: CallMode | None,
    ) -> None:
        """Fill (and `settle`) `results` at `positions` from the cache, from another run, or by computing.

        Claims are taken without waiting; the answers claimed are computed and stored before
        any claim held by another run is waited on, so a run never waits while holding a
        claim (two runs asking for the same keys in opposite orders cannot block each other).
        """
        pending = []
        for i in positions:
            failed = self.failed.get(keys[i][1])
            if failed is not None:  # failed earlier in this run: not sent again
                results[i] = dataclasses.replace(failed, cached=True)
                settle(i)
                continue
            if self.batch_answers and self._batch_answer(keys, i, results, settle, probe):
                continue  # answered by a batch job earlier in this run: paid once, here
            found = accept(self.cache.get(keys[i][0])) if self._cached() else None
            if found is None:
                pending.append(i)
            else:
                results[i] = found
                settle(i)
        if probe is not None and pending and probe.holds(self):
            for i in pending:
                results[i] = probe.miss(self, keys[i][0], functools.partial(compute, [i]))
                settle(i)
            return
        while pending:
            mine = [i for i in pending if self._claim(keys[i][0])]
            theirs = [i for i in pending if i not in mine]
            if mine:
                await self._compute_claimed(keys, mine, accept, compute, results, settle)
            pending = []
            for i in theirs:
                found = await self._wait_for_other_run(keys[i][0], accept)
                if found is None:  # the other run gave up: its claim is free to take
                    pending.append(i)
                else:
                    results[i] = found
                    settle(i)
        if probe is not None:  # computed for a probe that does not hold this client: the
            for i in positions:  # run's later call takes it from here, paid once
                done = results[i]
                if done is not None and not done.cached:
                    self.batch_answers[keys[i][0]] = done

    async def _compute_claimed(
        self,
        keys: Sequence[tuple[str, str]],
        claimed: list[int],
        accept: Accept,
        compute: Compute,
        results: list[CallResult[Any] | None],
        settle: Callable[[int], None],
    ) -> None:
        try:
            todo = []
            for i in claimed:  # the previous owner may have stored and released meanwhile
                found = accept(self.cache.peek(keys[i][0])) if self._cached() else None
                if found is None:
                    todo.append(i)
                else:
                    results[i] = found
                    settle(i)
            if todo:
                computed = await compute(todo, None)
                for i, (result, entry) in zip(todo, computed, strict=True):
                    if result.ok and entry is not None and self._cached():
                        self.cache.set(keys[i][0], entry, self.model)
                    elif not result.ok:
                        self.failed[keys[i][1]] = result
                    results[i] = result
        finally:
            if self._cached():  # after the answers are stored, so waiters find them
                for i in claimed:
                    self.cache.release(keys[i][0])
        for i in todo:
            settle(i)

    def _batch_answer(
        self,
        keys: Sequence[tuple[str, str]],
        i: int,
        results: list[CallResult[Any] | None],
        settle: Callable[[int], None],
        probe: CallMode | None,
    ) -> bool:
        """Position `i` answered by a batch job of this run (`models.calls.batch.collect`): its result,
        paid once. A validated answer is in the cache too; it is handed over (and so counted)
        once, then the cache answers. A failure stays: the batch gave no other answer."""
        key = keys[i][0]
        found = self.batch_answers.get(key)
        if found is None:
            return False
        results[i] = found
        settle(i)
        if found.ok:
            if probe is None:
                self.batch_answers.pop(key, None)
            else:
                probe.on_commit(lambda: self.batch_answers.pop(key, None))
        return True

    def _cached(self) -> bool:
        return self.backend.cacheable

    def _claim(self, key: str) -> bool:
        if not self._cached():
            return True
        ttl = (self.options.timeout + self.options.backoff_max) * self.options.max_attempts
        return self.cache.claim(key, ttl)

    async def _wait_for_other_run(self, key: str, accept: Accept) -> CallResult[Any] | None:
        """Another run holds `key`: its answer once stored, or None once it let go without one."""
        while True:
            await asyncio.sleep(CLAIM_POLL_SECONDS)
            found = accept(self.cache.peek(key))
            if found is not None:
                return found
            if not self.cache.claimed_elsewhere(key):
                return None

    # ------------------------------------------------------------------ sending

    async def _attempt(
        self, send: Callable[[], Awaitable[R]], tokens: int = 0, worst: Worst | None = None
    ) -> Attempted[R]:
        """Send with retries, limits, budget and breaker (`models.calls.sending`)."""
        return await self.sender.attempt(send, tokens, worst)

    def failure(self, exc: Exception) -> CallResult[Any]:
        """A failed send as a failure record naming why (`Sender.failure`)."""
        return self.sender.failure(exc)

    @property
    def breaker(self) -> Breaker:
        return self.sender.breaker

    @breaker.setter
    def breaker(self, breaker: Breaker) -> None:  # the hub shares one per model and endpoint
        self.sender.breaker = breaker

    @property
    def budget(self) -> Budget | None:
        return self.sender.budget

    @budget.setter
    def budget(self, budget: Budget | None) -> None:  # the run's, set by the hub
        self.sender.budget = budget

    @property
    def rates(self) -> Rates | None:
        return self.sender.rates

    @property
    def sent_online(self) -> int:
        return self.sender.sent_online


def _present(result: CallResult[Any] | None) -> CallResult[Any]:
    if result is None:
        raise RuntimeError("the call pipeline left a position unanswered")
    return result


__all__ = ["Accept", "CallPipeline", "Compute"]
