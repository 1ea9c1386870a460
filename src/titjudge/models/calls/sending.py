"""Sending one call's request: the retries, the budget, the limits and the breaker.

Each attempt reserves its worst case under the run's budget (`budget`), waits for a slot of
the model's limiter (concurrency, rpm, tpm, pauses: `limits`), is refused at once when the
model is stopped (`breaker`), and is sent under `timeout`; transient errors are retried with
tenacity (the provider's Retry-After, else exponential backoff with jitter), permanent ones
are not. A failure becomes a record naming why (`failure`), secrets redacted.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from titjudge.models.calls.breaker import Breaker, StoppedError
from titjudge.models.calls.budget import Budget, OverBudgetError
from titjudge.models.calls.drain import for_loop
from titjudge.models.calls.limits import Limiter
from titjudge.models.core.base import (
    Backend,
    BlockedError,
    Generation,
    MadeFor,
    MissingCredentialsError,
    PermanentError,
    TransientError,
    is_unbilled,
    mark_unbilled,
)
from titjudge.models.core.options import DEFAULT_STOP_AFTER, ModelOptions
from titjudge.models.core.prices import FREE, Rates, own_rates, rates_for, reply_cost
from titjudge.records.calls import CallResult
from titjudge.safety import redact

log = logging.getLogger(__name__)
R = TypeVar("R")


class Worst(NamedTuple):
    """One attempt's worst case for the run's budget: its input estimate and its output caps,
    and what the call is made for (the budget counts a refusal by it)."""

    tokens_in: int
    tokens_out: int
    made_for: MadeFor


@dataclass
class Attempted(Generic[R]):
    """What a backend returned, after how many attempts and how long in all."""

    value: R
    attempts: int
    latency: float


class Sender:
    """Sends one backend's requests under its options, limiter, breaker and the run's budget."""

    def __init__(
        self,
        backend: Backend,
        limiter: Limiter,
        options: ModelOptions,
        stop_after: int = DEFAULT_STOP_AFTER,
    ):
        self.backend = backend
        self.limiter = limiter
        self.options = options
        #: stops the model for the run once its endpoint refuses everything (or its quota is
        #: spent): nothing more is sent to it
        self.breaker = Breaker(str(backend.spec), stop_after)
        #: the rates titjudge prices this model's calls at itself ($0 for a local model, its
        #: `price` option); None: the price litellm reports with each reply
        self.rates: Rates | None = own_rates(backend.spec, options.price)
        #: the run's budget (`run.budget_usd`), shared by every client of the run; None: none
        self.budget: Budget | None = None
        self._budget_rates: Rates | None = None
        #: calls of a `batch: true` model sent online all the same (outside the batch phase's
        #: rounds, or by `titjudge score`): reported, never silent
        self.sent_online = 0
        #: attempts sent again after a transient error, and that error's kind, counted as they
        #: happen (the progress line shows them; a call's own count comes when it ends)
        self.retries = 0
        self.last_retry: str | None = None

    @property
    def model(self) -> str:
        return str(self.backend.spec)

    async def attempt(
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
                    if last is not None:  # a retry, after a transient error
                        self.retries += 1
                        self.last_retry = str(last).split(":", 1)[0][:60]
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
        cost = self._budget_rates.cost(worst.tokens_in, worst.tokens_out)
        return await self.budget.reserve(cost, made_for=worst.made_for)

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
        """One request on the wire, under `timeout`; once the run is stopping (a Ctrl-C:
        `drain`), a new one is never sent, and one already sent is counted until it is back."""
        timeout = self.options.timeout
        drain = for_loop()
        if drain.stopping:
            await drain.park()
        try:
            with drain.sending():
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

    def failure(self, exc: Exception) -> CallResult[Any]:
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


__all__ = ["Attempted", "Sender", "Worst"]
