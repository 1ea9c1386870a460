"""The one call pipeline every model call goes through, whatever it asks for.

in-process dedup -> cache lookup -> cross-process claim -> limits (concurrency, rpm, tpm,
pauses) -> tenacity retries, each attempt under `timeout` -> validate -> cache store. A model
whose endpoint refuses every request is stopped for the run (`models.calls.breaker`).

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
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from titjudge.cache.store import CallCache
from titjudge.models.calls.breaker import DEFAULT_STOP_AFTER, Breaker, StoppedError
from titjudge.models.calls.budget import Budget, OverBudgetError
from titjudge.models.calls.limits import Limiter
from titjudge.models.calls.probe import Answers, CacheProbe, Computed
from titjudge.models.calls.results import CallResult, Usage
from titjudge.models.core.base import (
    Backend,
    BlockedError,
    Generation,
    MissingCredentialsError,
    PermanentError,
    TransientError,
    is_unbilled,
    mark_unbilled,
)
from titjudge.models.core.options import ModelOptions
from titjudge.models.core.prices import FREE, Rates, own_rates, rates_for, reply_cost
from titjudge.safety import redact

log = logging.getLogger(__name__)
B = TypeVar("B", bound=Backend)
R = TypeVar("R")

CLAIM_POLL_SECONDS = 0.05

#: a cached entry as a result, or None when there is none or it cannot be used
Accept = Callable[[Any], CallResult[Any] | None]
#: computes the answers at the given positions of a call, in order, from a batch job's
#: `Answers` where given (None: sent online)
Compute = Callable[[list[int], Answers | None], Awaitable[list[Computed]]]
#: one attempt's worst case for the run's budget: its input estimate and its output caps
Worst = tuple[int, int]


@dataclass
class Attempted(Generic[R]):
    """What a backend returned, after how many attempts and how long in all."""

    value: R
    attempts: int
    latency: float


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
        #: stops the model for the run once its endpoint refuses everything (or its quota is
        #: spent): nothing more is sent to it
        self.breaker = Breaker(self.model, stop_after)
        #: the rates titjudge prices this model's calls at itself ($0 for a local model, its
        #: `price` option); None: the price litellm reports with each reply
        self.rates: Rates | None = own_rates(backend.spec, options.price)
        #: the run's budget (`run.budget_usd`), shared by every client of the run; None: none
        self.budget: Budget | None = None
        self._budget_rates: Rates | None = None
        #: answers (and failures) batch jobs gave this run, by cache key (`models.calls.batch`)
        self.batch_answers: dict[str, CallResult[Any]] = {}
        #: calls of a `batch: true` model sent online all the same (outside the batch phase's
        #: rounds, or by `titjudge score`): reported, never silent
        self.sent_online = 0

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
        probe: CacheProbe | None = None,
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
        probe: CacheProbe | None,
    ) -> None:
        """Fill (and `settle`) `results` at `positions` from the cache, from another run, or by computing.

        Claims are taken without waiting; the answers claimed are computed and stored before
        any claim held by another run is waited on, so a run never waits while holding a
        claim (two runs asking for the same keys in opposite orders cannot block each other).
        """
        pending = []
        for i in positions:
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
        probe: CacheProbe | None,
    ) -> bool:
        """Position `i` answered by a batch job of this run (`models.calls.batch`): its result,
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
        """Send with retries on transient errors only; each attempt reserves its `worst` case
        under the run's budget, waits for a limiter slot and is charged `tokens` (the request's
        estimate) under the model's tpm."""
        try:
            await self.backend.ready()
        except Exception as exc:  # the model could not be loaded: nothing was sent
            exc._titjudge_attempts = 0  # type: ignore[attr-defined]
            mark_unbilled(exc)
            raise
        if self.options.batch:
            self.sent_online += 1
        count = 0
        billed = False  # some attempt may have cost something (a timeout, a reply)
        started = time.perf_counter()
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientError),
            stop=stop_after_attempt(self.options.max_attempts),
            wait=self._wait,
            sleep=self.breaker.sleep,
            reraise=True,
        )
        last: Exception | None = None
        try:
            async for attempt in retrying:
                with attempt:
                    count += 1
                    try:
                        value = await self._once(send, tokens, worst)
                    except OverBudgetError as exc:
                        count -= 1  # nothing was sent; a retry refused names the last error
                        if last is not None:
                            exc.args = (f"{exc} (after {count} attempts; the last: {last})",)
                        raise
                    except StoppedError:
                        count -= 1  # nothing was sent
                        raise
                    except Exception as exc:
                        billed = billed or not is_unbilled(exc)
                        last = exc
                        raise
        except StoppedError as exc:
            # stopped between two attempts: the call's own last error is its reason
            failure: Exception = last if last is not None else exc
            failure._titjudge_attempts = count  # type: ignore[attr-defined]
            failure._titjudge_unbilled = not billed  # type: ignore[attr-defined]
            raise failure from None
        except Exception as exc:
            exc._titjudge_attempts = count  # type: ignore[attr-defined]
            # every attempt refused before a token: the call cost $0, not an unknown price
            exc._titjudge_unbilled = not billed  # type: ignore[attr-defined]
            raise
        return Attempted(value, count, time.perf_counter() - started)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return float(min(max(retry_after, 0.0), self.options.backoff_max))
        # exponential backoff with jitter (Google's retry strategy), computed here: tenacity
        # renamed its own helper's argument (initial -> multiplier) in 9.2
        initial = self.options.backoff_initial
        backoff = initial * 2 ** (state.attempt_number - 1) + random.uniform(0, initial)
        return float(min(max(backoff, 0.0), self.options.backoff_max))

    async def _once(self, send: Callable[[], Awaitable[R]], tokens: int, worst: Worst | None) -> R:
        self.breaker.check()  # a stopped model's calls do not wait for a slot
        held = await self._reserve(worst)  # before the slot: a refused call holds no place
        try:
            value = await self._limited(send, tokens)
        except BaseException as exc:
            if self.budget is not None and held:
                unbilled = isinstance(exc, StoppedError) or is_unbilled(exc)
                self.budget.settle(held, 0.0 if unbilled else held)
            raise
        if self.budget is not None and held:
            cost = value.cost if isinstance(value, Generation) else None
            self.budget.settle(held, held if cost is None else cost)
        return value

    async def _reserve(self, worst: Worst | None) -> float:
        """Reserve one attempt's worst case under the run's budget (0: no budget, or free)."""
        if self.budget is None or worst is None:
            return 0.0
        if self._budget_rates is None:
            self._budget_rates = rates_for(self.backend.spec, self.options.price)
            if self._budget_rates is None:  # the config refuses it at load; never sent unpriced
                raise OverBudgetError(self.budget)
        tokens_in, tokens_out = worst
        return await self.budget.reserve(self._budget_rates.cost(tokens_in, tokens_out))

    async def _limited(self, send: Callable[[], Awaitable[R]], tokens: int) -> R:
        async with self.limiter.slot(tokens) as grant:
            self.breaker.check()  # checked once a slot is granted: waiters see it too
            try:
                value = await self._send(send)
            except TransientError as exc:
                self.breaker.failed(exc)
                if exc.rate_limited:  # the whole model pauses for the provider's wait
                    wait = exc.retry_after
                    grant.rate_limited(
                        None if wait is None else min(wait, self.options.backoff_max)
                    )
                raise
            except PermanentError as exc:
                self.breaker.failed(exc)
                raise
            self.breaker.succeeded()
            grant.settle(_tokens_used(value))
            if self.rates is not None and isinstance(value, Generation):
                value.cost = reply_cost(self.rates, value)
            return value

    async def _send(self, send: Callable[[], Awaitable[R]]) -> R:
        timeout = self.options.timeout
        try:
            return await asyncio.wait_for(send(), timeout)
        except (TransientError, PermanentError):
            raise
        except asyncio.TimeoutError:
            raise TransientError(f"no reply within {timeout:g} s") from None
        except Exception as exc:
            mapped = self.backend.classify_error(exc)
            if mapped is exc:
                raise
            raise mapped from exc

    def _failure(self, exc: Exception) -> CallResult[Any]:
        """A failed send as a failure record naming why (secrets redacted). Absent credentials
        are no model failure: that error is raised again, and stops the run."""
        if isinstance(exc, MissingCredentialsError):
            raise exc
        attempts = getattr(exc, "_titjudge_attempts", 1)
        if isinstance(exc, TransientError):
            reason = f"gave up after {attempts} attempts: {exc}"
        elif isinstance(exc, PermanentError):
            reason = f"{exc}"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        reason = redact(reason)  # a provider may echo the key in its error text
        log.info("%s call failed: %s", self.model, reason)
        # refused before any token, or a model titjudge prices itself with no reply: $0
        unbilled = is_unbilled(exc) or getattr(exc, "_titjudge_unbilled", False)
        return CallResult(
            ok=False,
            error=reason,
            attempts=attempts,
            # a local model costs nothing; a priced one's failure may have been billed (a
            # timeout, a reply it could not use): unknown unless refused before any token
            cost=0.0 if unbilled or self.rates is FREE else None,
            blocked=isinstance(exc, BlockedError),
        )


def _tokens_used(value: Any) -> int | None:
    """The tokens a reply says it used (prompt + completion), or None when it does not say."""
    if isinstance(value, Generation) and value.tokens_in is not None:
        return value.tokens_in + (value.tokens_out or 0)
    return None


def _present(result: CallResult[Any] | None) -> CallResult[Any]:
    if result is None:
        raise RuntimeError("the call pipeline left a position unanswered")
    return result


__all__ = ["Accept", "Attempted", "CallPipeline", "Compute"]
