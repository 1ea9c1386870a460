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
from typing import Any, TypeVar

from pydantic import BaseModel
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from titjudge.cache.store import CallCache
from titjudge.models.base import (
    GenerateRequest,
    Generation,
    ImageInput,
    PermanentError,
    QuotaExhaustedError,
    TextBackend,
    TransientError,
)
from titjudge.models.images import fit_image
from titjudge.models.keys import generation_key
from titjudge.models.limits import Limiter
from titjudge.models.results import (
    TRUNCATED,
    CallResult,
    Usage,
    from_hit,
    incomplete_reason,
    usage_of,
)
from titjudge.models.structured import StructuredOutputError, parse_structured, response_schema
from titjudge.safety import redact

log = logging.getLogger(__name__)
T = TypeVar("T")
S = TypeVar("S", bound=BaseModel)

CLAIM_POLL_SECONDS = 0.05

REASK = (
    "Your previous reply could not be used: {error}. Reply again with only the JSON object, "
    "with exactly the requested fields and types, and nothing else."
)


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
        *,
        max_image_pixels: int | None = None,
        key_options: dict[str, Any] | None = None,
    ):
        self.backend = backend
        self.cache = cache
        self.limiter = limiter
        self.policy = policy
        self.params = dict(params or {})
        self.max_image_pixels = max_image_pixels
        #: options that change the output besides `params` (thinking): part of every key
        self.key_options = {k: v for k, v in (key_options or {}).items() if v is not None}
        self.usage: dict[str, Usage] = {}
        self._inflight: dict[str, asyncio.Future[CallResult[Any]]] = {}
        #: set when the model's quota is spent: nothing more is sent to it this run
        self.dead: str | None = None
        self._fit_memo: dict[str, ImageInput] = {}

    @property
    def model(self) -> str:
        return str(self.backend.spec)

    # ------------------------------------------------------------------ public calls

    async def text(
        self,
        request: GenerateRequest,
        *,
        role: str,
        template: dict[str, str] | None = None,
        accept_truncated: bool = False,
    ) -> CallResult[str]:
        """Free text (descriptions). Empty, cut or blocked text is a failure, unless the caller
        keeps cut text (`accept_truncated`: then it is marked `truncated`, and a run that does
        not accept cut text treats such a cached entry as no answer)."""
        request = self._fit(request)
        key = generation_key(
            self.backend.spec,
            request,
            params=self.params,
            template=template,
            options=self.key_options,
        )
        return await self._dedup(
            key, role, lambda: self._text(key, request, accept_truncated), accept_truncated
        )

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
            self._fit(request), json_schema=response_schema(schema), schema_name=schema.__name__
        )
        key = generation_key(
            self.backend.spec,
            keyed,
            params=self.params,
            template=template,
            purpose="structured",
            options=self.key_options,
        )
        if not self.backend.capabilities.json_schema:
            keyed = dataclasses.replace(keyed, json_schema=None)
        return await self._dedup(key, role, lambda: self._structured(key, keyed, schema))

    # ------------------------------------------------------------------ internals

    def _fit(self, request: GenerateRequest) -> GenerateRequest:
        """Images above `max_image_pixels` downscaled; the resized bytes are what the key hashes."""
        if self.max_image_pixels is None or not request.images:
            return request
        fitted = tuple(self._fitted(image, self.max_image_pixels) for image in request.images)
        if all(a is b for a, b in zip(fitted, request.images, strict=True)):
            return request
        return dataclasses.replace(request, images=fitted)

    def _fitted(self, image: ImageInput, max_pixels: int) -> ImageInput:
        """One resize per image, however many roles send it (describer, lmm, lmm_yes)."""
        found = self._fit_memo.get(image.sha256)
        if found is None:
            found = fit_image(image, max_pixels)
            if len(self._fit_memo) >= 256:
                self._fit_memo.pop(next(iter(self._fit_memo)))
            self._fit_memo[image.sha256] = found
        return found

    async def _dedup(
        self,
        key: str,
        role: str,
        compute: Callable[[], Awaitable[CallResult[Any]]],
        variant: object = None,
    ) -> CallResult[Any]:
        """Identical concurrent calls share one request (`variant`: how the answer is accepted)."""
        key = f"{key}:{variant}" if variant else key
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

    def _claim_ttl(self) -> float:
        return (
            self.policy.timeout * self.policy.max_attempts
            + self.policy.backoff_max * self.policy.max_attempts
        )

    async def _claim_or_wait(self, key: str) -> dict[str, Any] | None:
        """Claim `key` for this run, or wait for the run that holds it; returns its answer if any."""
        if not self.backend.cacheable:
            return None
        ttl = self._claim_ttl()
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

    async def _text(
        self, key: str, request: GenerateRequest, accept_truncated: bool
    ) -> CallResult[str]:
        hit = self._lookup(key) or await self._claim_or_wait(key)
        if hit is not None and (accept_truncated or hit.get("finish_reason") not in TRUNCATED):
            result = from_hit(hit, hit["text"])
            result.truncated = hit.get("finish_reason") in TRUNCATED
            return result
        if hit is not None:
            self.cache.claim(key, self._claim_ttl())  # a kept cut reply: ask again, unstored
        try:
            return await self._text_call(key, request, accept_truncated)
        finally:
            self.cache.release(key)  # after the answer is stored, so waiters find it

    async def _text_call(
        self, key: str, request: GenerateRequest, accept_truncated: bool
    ) -> CallResult[str]:
        try:
            done = await self._attempt(request)
        except Exception as exc:  # a model failure becomes a record, never a value
            return self._failure(exc)
        gen = done.generation
        problem = incomplete_reason(gen, request.max_tokens)
        keep = problem is not None and accept_truncated and gen.finish_reason in TRUNCATED
        keep = keep and bool(gen.text and gen.text.strip())
        result = _result_from(done, ok=problem is None or keep)
        if not result.ok:  # its tokens and cost still count; it is never cached
            result.error = problem
            return result
        result.truncated = keep
        result.value = gen.text.strip()
        self._store(key, {"text": result.value, **usage_of(result)})
        return result

    async def _structured(
        self, key: str, request: GenerateRequest, schema: type[S]
    ) -> CallResult[S]:
        hit = self._lookup(key) or await self._claim_or_wait(key)
        if hit is not None:
            return from_hit(hit, schema.model_validate(hit["data"]))
        try:
            return await self._structured_call(key, request, schema)
        finally:
            self.cache.release(key)

    async def _structured_call(
        self, key: str, request: GenerateRequest, schema: type[S]
    ) -> CallResult[S]:
        try:
            done = await self._attempt(request)
        except Exception as exc:
            return self._failure(exc)
        result: CallResult[S] = _result_from(done, ok=False)
        problem = incomplete_reason(done.generation, request.max_tokens)
        if problem is not None:  # a cut or empty reply is not re-asked: the cause is named
            result.error = problem
            return result
        try:
            result.value = parse_structured(done.generation.text, schema)
        except StructuredOutputError as first:
            reask = dataclasses.replace(
                request,
                history=(
                    *request.history,
                    ("user", request.prompt),
                    ("assistant", done.generation.text),  # non-empty: checked above
                ),
                prompt=REASK.format(error=first),
            )
            try:
                again = await self._attempt(reask)
            except Exception as exc:  # the first reply's tokens and cost still count
                failed = self._failure(exc)
                result.error = f"re-ask failed: {failed.error} (first reply: {first})"
                result.attempts += failed.attempts
                return result
            _merge(result, again)
            result.reasked = True
            problem = incomplete_reason(again.generation, request.max_tokens)
            if problem is not None:
                result.error = f"re-ask {problem} (first reply: {first})"
                return result
            try:
                result.value = parse_structured(again.generation.text, schema)
            except StructuredOutputError as second:
                result.error = f"invalid output after re-ask: {second} (first reply: {first})"
                return result
        result.ok = True
        final = result.raw or ""
        self._store(
            key,
            {
                "text": final,
                "data": result.value.model_dump(mode="json"),
                "reasked": result.reasked,
                **usage_of(result),
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
        reason = redact(reason)  # a provider may echo the key in its error text
        if isinstance(exc, QuotaExhaustedError) and self.dead is None:
            self.dead = reason
            log.warning(
                "%s: %s. No further requests go to this model in this run; everything already "
                "answered is kept, and a re-run after the quota is restored resumes from the cache.",
                self.model,
                reason,
            )
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
            if self.dead is not None:  # checked once a slot is granted: waiters see it too
                raise PermanentError(f"not sent: {self.model} quota exhausted earlier in this run")
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
        finish_reason=gen.finish_reason,
        thinking_tokens=gen.thinking_tokens,
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
    result.finish_reason = gen.finish_reason
    if gen.thinking_tokens is not None:
        result.thinking_tokens = (result.thinking_tokens or 0) + gen.thinking_tokens


__all__ = ["ModelClient", "RetryPolicy"]
