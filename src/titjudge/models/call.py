"""The one call layer every model call goes through.

cache lookup -> rate limit -> call with tenacity retries -> validate -> cache store.

A call never raises for a model problem: it returns a `CallResult` whose `ok` is False
and whose `error` says why (after retries, after one re-ask for invalid JSON). Only
validated results are cached, so a bad answer is asked again next run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from titjudge.cache.keys import generation_key
from titjudge.cache.store import CallCache
from titjudge.models.base import (
    GenerateRequest,
    Generation,
    PermanentError,
    TextBackend,
    TokenLogprobs,
    TransientError,
)
from titjudge.models.limits import Limiter
from titjudge.models.structured import StructuredOutputError, parse_structured, response_schema

log = logging.getLogger(__name__)
T = TypeVar("T")
S = TypeVar("S", bound=BaseModel)

CLAIM_POLL_SECONDS = 0.05

REASK = (
    "Your previous reply could not be used: {error}. Reply again with only the JSON object, "
    "with exactly the requested fields and types, and nothing else."
)


@dataclass
class CallResult(Generic[T]):
    """One logical model call: a validated value, or a failure with its reason."""

    ok: bool
    value: T | None = None
    raw: str | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    reasked: bool = False
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    logprobs: list[TokenLogprobs] | None = None


@dataclass
class Usage:
    """Totals for one role (describer, judge, ...) over a run."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    latency: float = 0.0

    def add(self, result: CallResult[Any]) -> None:
        """Tokens, cost and latency count only what was paid for in this run (not cache hits)."""
        self.calls += 1
        self.cache_hits += result.cached
        self.failures += not result.ok
        if not result.cached:
            self.tokens_in += result.tokens_in
            self.tokens_out += result.tokens_out
            self.cost += result.cost or 0.0
            self.latency += result.latency


@dataclass
class RetryPolicy:
    max_attempts: int = 6
    backoff_initial: float = 1.0
    backoff_max: float = 60.0
    timeout: float = 120.0


@dataclass
class _Attempted:
    generation: Generation
    attempts: int
    latency: float


class ModelClient:
    """Drives one text backend with caching, limits, retries and validation."""

    def __init__(
        self,
        backend: TextBackend,
        cache: CallCache,
        limiter: Limiter,
        policy: RetryPolicy,
        params: dict[str, Any] | None = None,
    ):
        self.backend = backend
        self.cache = cache
        self.limiter = limiter
        self.policy = policy
        self.params = dict(params or {})
        self.usage: dict[str, Usage] = {}
        self._inflight: dict[str, asyncio.Future[CallResult[Any]]] = {}

    @property
    def model(self) -> str:
        return str(self.backend.spec)

    # ------------------------------------------------------------------ public calls

    async def text(
        self, request: GenerateRequest, *, role: str, template: dict[str, str] | None = None
    ) -> CallResult[str]:
        """Free text (descriptions). Empty text is a failure."""
        key = generation_key(self.backend.spec, request, params=self.params, template=template)
        return await self._dedup(key, role, lambda: self._text(key, request))

    async def structured(
        self,
        request: GenerateRequest,
        schema: type[S],
        *,
        role: str,
        template: dict[str, str] | None = None,
    ) -> CallResult[S]:
        """A reply validated against `schema`, with one re-ask quoting the validation error."""
        keyed = dataclasses.replace(
            request, json_schema=response_schema(schema), schema_name=schema.__name__
        )
        key = generation_key(
            self.backend.spec, keyed, params=self.params, template=template, purpose="structured"
        )
        if not self.backend.capabilities.json_schema:
            keyed = dataclasses.replace(keyed, json_schema=None)
        return await self._dedup(key, role, lambda: self._structured(key, keyed, schema))

    # ------------------------------------------------------------------ internals

    async def _dedup(
        self, key: str, role: str, compute: Callable[[], Awaitable[CallResult[Any]]]
    ) -> CallResult[Any]:
        """Identical concurrent calls share one request."""
        pending = self._inflight.get(key)
        if pending is not None:
            result = dataclasses.replace(await asyncio.shield(pending), cached=True)
        else:
            future: asyncio.Future[CallResult[Any]] = asyncio.get_running_loop().create_future()
            self._inflight[key] = future
            try:
                result = await compute()
                future.set_result(result)
            except BaseException as exc:
                future.set_exception(exc)
                future.exception()  # mark retrieved: waiters re-raise it themselves
                raise
            finally:
                del self._inflight[key]
        self.usage.setdefault(role, Usage()).add(result)
        return result

    def _lookup(self, key: str) -> dict[str, Any] | None:
        if not self.backend.cacheable:
            return None
        found = self.cache.get(key, self.model)
        return found if isinstance(found, dict) else None

    async def _claim_or_wait(self, key: str) -> dict[str, Any] | None:
        """Claim `key` for this run, or wait for the run that holds it; returns its answer if any."""
        if not self.backend.cacheable:
            return None
        ttl = (
            self.policy.timeout * self.policy.max_attempts
            + self.policy.backoff_max * self.policy.max_attempts
        )
        while not self.cache.claim(key, ttl):
            await asyncio.sleep(CLAIM_POLL_SECONDS)
            found = self.cache.peek(key)
            if isinstance(found, dict):
                return found
        found = self.cache.peek(key)  # the previous owner may have stored and released meanwhile
        if isinstance(found, dict):
            self.cache.release(key)
            return found
        return None

    def _store(self, key: str, value: dict[str, Any]) -> None:
        if self.backend.cacheable:
            self.cache.set(key, value, self.model)

    async def _text(self, key: str, request: GenerateRequest) -> CallResult[str]:
        hit = self._lookup(key) or await self._claim_or_wait(key)
        if hit is not None:
            return _from_hit(hit, hit["text"])
        try:
            return await self._text_call(key, request)
        finally:
            self.cache.release(key)  # after the answer is stored, so waiters find it

    async def _text_call(self, key: str, request: GenerateRequest) -> CallResult[str]:
        try:
            done = await self._attempt(request)
        except Exception as exc:  # a model failure becomes a record, never a value
            return self._failure(exc)
        gen = done.generation
        result = _result_from(done, ok=bool(gen.text and gen.text.strip()))
        if not result.ok:
            result.error = f"empty reply (finish_reason={gen.finish_reason})"
            return result
        result.value = gen.text.strip()
        self._store(key, {"text": result.value, **_usage_of(result)})
        return result

    async def _structured(
        self, key: str, request: GenerateRequest, schema: type[S]
    ) -> CallResult[S]:
        hit = self._lookup(key) or await self._claim_or_wait(key)
        if hit is not None:
            return _from_hit(hit, schema.model_validate(hit["data"]))
        try:
            return await self._structured_call(key, request, schema)
        finally:
            self.cache.release(key)

    async def _structured_call(
        self, key: str, request: GenerateRequest, schema: type[S]
    ) -> CallResult[S]:
        try:
            done = await self._attempt(request)
            result: CallResult[S] = _result_from(done, ok=False)
            try:
                result.value = parse_structured(done.generation.text, schema)
            except StructuredOutputError as first:
                reask = dataclasses.replace(
                    request,
                    history=(
                        *request.history,
                        ("user", request.prompt),
                        ("assistant", done.generation.text),
                    ),
                    prompt=REASK.format(error=first),
                )
                again = await self._attempt(reask)
                _merge(result, again)
                result.reasked = True
                try:
                    result.value = parse_structured(again.generation.text, schema)
                except StructuredOutputError as second:
                    result.error = f"invalid output after re-ask: {second} (first reply: {first})"
                    return result
        except Exception as exc:
            return self._failure(exc)
        result.ok = True
        final = result.raw or ""
        self._store(
            key,
            {
                "text": final,
                "data": result.value.model_dump(mode="json"),
                "reasked": result.reasked,
                **_usage_of(result),
            },
        )
        return result

    def _failure(self, exc: Exception) -> CallResult[Any]:
        attempts = getattr(exc, "_titjudge_attempts", 1)
        if isinstance(exc, TransientError):
            reason = f"gave up after {attempts} attempts: {exc}"
        elif isinstance(exc, PermanentError):
            reason = f"{exc}"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        log.info("%s call failed: %s", self.model, reason)
        return CallResult(ok=False, error=reason, attempts=attempts)

    async def _attempt(self, request: GenerateRequest) -> _Attempted:
        """Call the backend with retries on transient errors only."""
        count = 0
        started = time.perf_counter()
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientError),
            stop=stop_after_attempt(self.policy.max_attempts),
            wait=self._wait,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    count += 1
                    generation = await self._once(request)
        except Exception as exc:
            exc._titjudge_attempts = count  # type: ignore[attr-defined]
            raise
        return _Attempted(generation, count, time.perf_counter() - started)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return float(min(max(retry_after, 0.0), self.policy.backoff_max))
        backoff = wait_exponential_jitter(
            multiplier=self.policy.backoff_initial,
            max=self.policy.backoff_max,
            jitter=self.policy.backoff_initial,
        )
        return float(backoff(state))

    async def _once(self, request: GenerateRequest) -> Generation:
        async with self.limiter:
            try:
                return await asyncio.wait_for(self.backend.generate(request), self.policy.timeout)
            except (TransientError, PermanentError):
                raise
            except asyncio.TimeoutError:
                raise TransientError(f"no reply within {self.policy.timeout:g} s") from None
            except Exception as exc:
                mapped = self.backend.classify_error(exc)
                if mapped is exc:
                    raise
                raise mapped from exc


def _result_from(done: _Attempted, ok: bool) -> CallResult[Any]:
    gen = done.generation
    return CallResult(
        ok=ok,
        raw=gen.text,
        attempts=done.attempts,
        tokens_in=gen.tokens_in or 0,
        tokens_out=gen.tokens_out or 0,
        cost=gen.cost,
        latency=done.latency,
        logprobs=gen.logprobs,
    )


def _merge(result: CallResult[Any], again: _Attempted) -> None:
    gen = again.generation
    result.raw = gen.text
    result.attempts += again.attempts
    result.tokens_in += gen.tokens_in or 0
    result.tokens_out += gen.tokens_out or 0
    result.cost = (
        None if result.cost is None and gen.cost is None else (result.cost or 0) + (gen.cost or 0)
    )
    result.latency += again.latency
    result.logprobs = gen.logprobs


def _usage_of(result: CallResult[Any]) -> dict[str, Any]:
    """What a hit reports about the original call (tokens and cost it took once)."""
    return {
        "tokens_in": result.tokens_in,
        "tokens_out": result.tokens_out,
        "cost": result.cost,
        "attempts": result.attempts,
        "logprobs": _logprobs_to(result.logprobs),
    }


def _from_hit(hit: dict[str, Any], value: Any) -> CallResult[Any]:
    return CallResult(
        ok=True,
        value=value,
        raw=hit["text"],
        cached=True,
        attempts=hit.get("attempts", 0),
        reasked=bool(hit.get("reasked", False)),
        tokens_in=hit.get("tokens_in", 0),
        tokens_out=hit.get("tokens_out", 0),
        cost=hit.get("cost"),
        logprobs=_logprobs_from(hit.get("logprobs")),
    )


def _logprobs_to(logprobs: list[TokenLogprobs] | None) -> list[dict[str, Any]] | None:
    return None if logprobs is None else [dataclasses.asdict(lp) for lp in logprobs]


def _logprobs_from(raw: list[dict[str, Any]] | None) -> list[TokenLogprobs] | None:
    return None if raw is None else [TokenLogprobs(**lp) for lp in raw]


__all__ = ["CallResult", "ModelClient", "RetryPolicy", "Usage"]
