"""The one call pipeline every model call goes through, whatever it asks for.

in-process dedup (`models.calls.sharing.dedup`) -> what the run already has (`models.calls.sharing.run_answers`:
a batch job's answer, a failure of this run) -> cache lookup (or a cache probe's miss) ->
cross-process claim (`models.calls.sharing.claims`) -> the send (`models.calls.sending`: limits,
budget, retries, timeout, breaker) -> validate -> cache store. Each of those is a unit of its
own with its own tests; this module puts them in order.

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
from titjudge.models.calls.sharing.claims import Accept, Claims
from titjudge.models.calls.sharing.dedup import InFlight
from titjudge.models.calls.sharing.run_answers import RunAnswers
from titjudge.models.core.base import Backend
from titjudge.models.core.clients import SEND, CallMode
from titjudge.models.core.options import DEFAULT_STOP_AFTER, ModelOptions, RequireModel
from titjudge.models.core.prices import Rates
from titjudge.records.calls import CallResult, Usage

B = TypeVar("B", bound=Backend)
R = TypeVar("R")

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
        require_model: RequireModel = "report",
        stop_after: int = DEFAULT_STOP_AFTER,
    ):
        self.backend = backend
        self.cache = cache
        self.limiter = limiter
        self.options = options
        self.params = dict(options.params)
        #: `exact`: a reply from another model than the configured one is a failure record
        self.require_model = require_model
        self.usage: dict[str, Usage] = {}
        self._inflight = InFlight()
        #: retries, limits, budget and breaker of every request this client sends
        self.sender = Sender(backend, limiter, options, stop_after)
        self.claims = Claims(cache, options, lambda: self.backend.cacheable)
        #: batch jobs' answers and this run's failures (`models.calls.sharing.run_answers`)
        self.answers = RunAnswers()

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
        *,
        probe: CallMode,
    ) -> list[CallResult[Any]]:
        """One result per (cache key, sharing key), in order. Positions with a sharing key
        already in flight in this process wait for that answer; repeats share the first.
        `probe`: the call's mode (`models.core.clients.CallMode`); `SEND` answers, computing misses."""
        results: list[CallResult[Any] | None] = [None] * len(keys)
        shares = self._inflight.share([shared for _, shared in keys])

        def settle(i: int) -> None:
            """Position `i` is answered: its waiters in this process get it now, not once the
            whole call is done (a cache hit next to a computed text is a hit for them too)."""
            shares.settle(keys[i][1], _present(results[i]))

        try:
            firsts = [positions[0] for positions in shares.owned.values()]
            if firsts:
                await self._answer(keys, firsts, accept, compute, results, settle, probe=probe)
            for positions in shares.owned.values():
                first = _present(results[positions[0]])
                for i in positions[1:]:
                    results[i] = dataclasses.replace(first, cached=True)
        except BaseException as exc:
            shares.abandon(exc)
            raise
        finally:
            shares.close()
        for i, future in shares.waiting.items():
            results[i] = dataclasses.replace(await asyncio.shield(future), cached=True)
        final = [_present(result) for result in results]
        ledger = self.usage.setdefault(role, Usage())
        if probe is not SEND:
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
        *,
        probe: CallMode,
    ) -> None:
        """Fill (and `settle`) `results` at `positions` from the cache, from another run, or by computing.

        Claims are taken without waiting; the answers claimed are computed and stored before
        any claim held by another run is waited on, so a run never waits while holding a
        claim (two runs asking for the same keys in opposite orders cannot block each other).
        """
        pending = []
        for i in positions:
            # a batch job's answer (paid once, here) or a failure of this run (not sent again)
            found = self.answers.find(keys[i][0], keys[i][1], probe=probe)
            if found is None and self._cached():
                found = accept(self.cache.get(keys[i][0]))
            if found is None:
                pending.append(i)
            else:
                results[i] = found
                settle(i)
        if probe is not SEND and pending and probe.holds(self):
            for i in pending:
                results[i] = probe.miss(self, keys[i][0], functools.partial(compute, [i]))
                settle(i)
            return
        while pending:
            mine = [i for i in pending if self.claims.take(keys[i][0])]
            theirs = [i for i in pending if i not in mine]
            if mine:
                await self._compute_claimed(keys, mine, accept, compute, results, settle)
            pending = []
            for i in theirs:
                found = await self.claims.wait(keys[i][0], accept)
                if found is None:  # the other run gave up: its claim is free to take
                    pending.append(i)
                else:
                    results[i] = found
                    settle(i)
        if probe is not SEND:  # computed for a probe that does not hold this client: the
            for i in positions:  # run's later call takes it from here, paid once
                done = results[i]
                if done is not None and not done.cached:
                    self.answers.keep_batch(keys[i][0], done)

    async def _compute_claimed(
        self,
        keys: Sequence[tuple[str, str]],
        claimed: list[int],
        accept: Accept,
        compute: Compute,
        results: list[CallResult[Any] | None],
        settle: Callable[[int], None],
    ) -> None:
        released: set[int] = set()
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
                        self.cache.set(keys[i][0], entry, self.model, release_claim=True)
                        released.add(i)
                    elif not result.ok:
                        self.answers.keep_failure(keys[i][1], result)
                    results[i] = result
        finally:
            for i in claimed:  # after the answers are stored, so waiters find them
                if i not in released:  # a stored answer's claim went with its store
                    self.claims.release(keys[i][0])
        for i in todo:
            settle(i)

    def _cached(self) -> bool:
        return self.backend.cacheable

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
