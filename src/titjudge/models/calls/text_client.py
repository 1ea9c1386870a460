"""Text and validated-object calls: the two kinds of call that ask a model to write.

They go through the one pipeline (`models.calls.pipeline`): cache lookup, claim, limits, retries,
timeout, store. What is theirs: images fitted before keying, the checks that make a reply
usable (not cut, not withheld, not empty), and for a validated object one re-ask quoting the
validation error. Only validated results are cached, so a bad answer is asked again next run.
Every reply keeps the model it says answered (`models.calls.provenance`); under `run.require_model:
exact` a reply from another model is a failure record, and a cached one is asked again.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from pydantic import BaseModel

from titjudge.cache.store import CallCache
from titjudge.models.calls.batch_answers import Deferred, batch_reply
from titjudge.models.calls.batch_spend import line_worst
from titjudge.models.calls.estimate_probe import Asked
from titjudge.models.calls.image_fit import ImageFitter
from titjudge.models.calls.keys import generation_key
from titjudge.models.calls.limits import Limiter
from titjudge.models.calls.pipeline import CallPipeline
from titjudge.models.calls.probe import Answers, Computed
from titjudge.models.calls.provenance import refusal
from titjudge.models.calls.results import from_hit, incomplete_reason, usage_of, withheld
from titjudge.models.calls.sending import Attempted, Worst
from titjudge.models.calls.structured import (
    StructuredOutputError,
    parse_structured,
    response_schema,
)
from titjudge.models.calls.token_estimate import request_tokens
from titjudge.models.core.base import GenerateRequest, Generation, TextBackend
from titjudge.models.core.clients import SEND, CallMode
from titjudge.models.core.options import ModelOptions, RequireModel
from titjudge.records.calls import TRUNCATED, CallResult, sum_costs

S = TypeVar("S", bound=BaseModel)

REASK = (
    "Your previous reply could not be used: {error}. Reply again with only the JSON object, "
    "with exactly the requested fields and types, and nothing else."
)


class ModelClient(CallPipeline[TextBackend]):
    """Drives one text backend: free text and schema-validated replies."""

    def __init__(
        self,
        backend: TextBackend,
        cache: CallCache,
        limiter: Limiter,
        options: ModelOptions,
        require_model: RequireModel = "report",
    ):
        super().__init__(backend, cache, limiter, options, require_model)
        #: images fitted to `max_image_pixels` and the provider's byte limit before keying
        self.fitter = ImageFitter(backend, cache, options.max_image_pixels)
        #: options that change the output besides `params` (thinking): part of every key
        self.key_options = {k: v for k, v in backend.cache_facts().items() if v is not None}
        thinking = options.thinking
        #: output tokens reserved under tpm and in estimates beyond max_tokens: what the backend
        #: lets the model think (a budget, or the provider's default allowance it sends)
        reserve = backend.thinking_reserve()
        if reserve is None:
            reserve = (thinking.budget or 0) if thinking and thinking.enabled else 0
        self._thinking_reserve = reserve

    # ------------------------------------------------------------------ public calls

    async def text(
        self,
        request: GenerateRequest,
        *,
        role: str,
        template: dict[str, str] | None = None,
        accept_truncated: bool = False,
        probe: CallMode,
    ) -> CallResult[str]:
        """Free text (descriptions). Empty, cut or blocked text is a failure, unless the caller
        keeps cut text (`accept_truncated`: then it is marked `truncated`, and a run that does
        not accept cut text treats such a cached entry as no answer). `probe`: the call's mode
        (`models.core.clients.CallMode`; `SEND`: answered, computing a miss)."""
        request, notes = await self.fitter.fit(request, probe=probe)
        key = generation_key(
            self.backend.spec,
            request,
            params=self.params,
            template=template,
            options=self.key_options,
        )
        if probe is not SEND:  # what it would send (`titjudge estimate` counts it)
            probe.note(
                key,
                Asked(
                    role, "text", request, thinking_cap=self._thinking_reserve, template=template
                ),
            )

        def accept(hit: Any) -> CallResult[Any] | None:
            if not isinstance(hit, dict):
                return None
            cut = hit.get("finish_reason") in TRUNCATED
            if cut and not accept_truncated:  # a kept cut reply: asked again
                return None
            if self._refusal(hit.get("answered_by"), cached=True):  # another model's: asked again
                return None
            result = from_hit(hit, hit["text"])
            result.truncated = cut
            return result

        async def compute(_: list[int], answers: Answers | None) -> list[Computed]:
            return [await self._text_call(request, accept_truncated, answers)]

        shared = f"{key}:{accept_truncated}" if accept_truncated else key
        (result,) = await self._run(role, [(key, shared)], accept, compute, probe=probe)
        result.image_fit = notes or None
        return result

    async def structured(
        self,
        request: GenerateRequest,
        schema: type[S],
        *,
        role: str,
        template: dict[str, str] | None = None,
        probe: CallMode,
    ) -> CallResult[S]:
        """A reply validated against `schema`, with one re-ask quoting the validation error;
        `probe` as for `text`."""
        fitted, notes = await self.fitter.fit(request, probe=probe)
        json_schema = response_schema(schema)
        # the name providers are sent: the schema's title (the class name unless it sets one)
        keyed = dataclasses.replace(
            fitted, json_schema=json_schema, schema_name=json_schema["title"]
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
        if probe is not SEND:
            probe.note(
                key,
                Asked(
                    role,
                    "structured",
                    keyed,
                    thinking_cap=self._thinking_reserve,
                    template=template,
                    stand_in=getattr(schema, "stand_in", None),
                ),
            )

        def accept(hit: Any) -> CallResult[Any] | None:
            if not isinstance(hit, dict):
                return None
            if self._refusal(hit.get("answered_by"), cached=True):  # another model's: asked again
                return None
            return from_hit(hit, schema.model_validate(hit["data"]))

        async def compute(_: list[int], answers: Answers | None) -> list[Computed]:
            return [await self._structured_call(keyed, schema, answers)]

        (result,) = await self._run(role, [(key, key)], accept, compute, probe=probe)
        result.image_fit = notes or None
        return result

    # ------------------------------------------------------------------ internals

    def _refusal(self, answered_by: str | None, *, cached: bool = False) -> str | None:
        """Why `run.require_model: exact` refuses a reply from `answered_by` (None: kept)."""
        if self.require_model != "exact":
            return None
        return refusal(self.model, answered_by, cached=cached)

    def _answered(self, done: Attempted[Generation], ok: bool) -> CallResult[Any]:
        """The call's result with the model its reply says answered; a reply that
        `run.require_model: exact` refuses is a failure naming both models."""
        result = _result_from(done, ok, self.backend.answered_by(done.value))
        refused = self._refusal(result.answered_by)
        if refused is not None:
            result.ok, result.error = False, refused
        return result

    async def _generate(
        self, request: GenerateRequest, answers: Answers | None = None
    ) -> Attempted[Generation]:
        """The reply to `request`: sent (with retries, limits and budget), or read from a
        batch job's `answers` when given (`Deferred` when it has none yet)."""
        if request.images:  # a deferred image's bytes are read now, when they must be sent
            request = dataclasses.replace(
                request, images=tuple([await image.load() for image in request.images])
            )
        if answers is not None:  # a batch job's reply, read as if it had just come
            try:
                return Attempted(batch_reply(self.backend, self.rates, request, answers), 1, 0.0)
            except Deferred as deferred:  # into a job: its worst case, for the budget
                deferred.worst_usd = self._batch_worst(request)
                deferred.made_for = request.made_for
                raise
        tokens, worst = 0, None
        if self.limiter.tpm_pacer is not None or self.budget is not None:  # only where needed
            cap = request.max_tokens + self._thinking_reserve
            tokens_in = request_tokens(request, self.backend.spec, 0)
            tokens, worst = tokens_in + cap, Worst(tokens_in, cap, request.made_for)
        return await self._attempt(lambda: self.backend.generate(request), tokens, worst)

    def _batch_worst(self, request: GenerateRequest) -> float:
        """A batch line's worst case under the run's budget (`batch_spend.line_worst`)."""
        if self.budget is None:  # nothing to estimate
            return 0.0
        cap = request.max_tokens + self._thinking_reserve
        tokens_in = request_tokens(request, self.backend.spec, 0)
        return line_worst(self.budget, self.backend.spec, self.options.price, tokens_in, cap)

    async def _text_call(
        self, request: GenerateRequest, accept_truncated: bool, answers: Answers | None = None
    ) -> Computed:
        try:
            done = await self._generate(request, answers)
        except Exception as exc:  # a model failure becomes a record, never a value
            return self.failure(exc), None
        gen = done.value
        problem = incomplete_reason(gen, request.max_tokens)
        keep = problem is not None and accept_truncated and gen.finish_reason in TRUNCATED
        keep = keep and bool(gen.text and gen.text.strip())
        result = self._answered(done, ok=problem is None or keep)
        if not result.ok:  # its tokens and cost still count; it is never cached
            result.error = result.error or problem
            return result, None
        result.truncated = keep
        result.value = gen.text.strip()
        return result, {"text": result.value, **usage_of(result)}

    async def _structured_call(
        self, request: GenerateRequest, schema: type[S], answers: Answers | None = None
    ) -> Computed:
        try:
            done = await self._generate(request, answers)
        except Exception as exc:
            return self.failure(exc), None
        result: CallResult[S] = self._answered(done, ok=False)
        if result.error is not None:  # another model's reply (require_model): not re-asked
            return result, None
        problem = incomplete_reason(done.value, request.max_tokens)
        if problem is not None:  # a cut or empty reply is not re-asked: the cause is named
            result.error = problem
            return result, None
        try:
            result.value = parse_structured(done.value.text, schema)
        except StructuredOutputError as first:
            if not await self._reask(request, done.value.text, schema, first, result, answers):
                return result, None
        result.ok = True
        assert result.value is not None
        entry = {
            "text": result.raw or "",
            "data": result.value.model_dump(mode="json"),
            "reasked": result.reasked,
            **usage_of(result),
        }
        return result, entry

    async def _reask(
        self,
        request: GenerateRequest,
        reply: str,
        schema: type[S],
        first: StructuredOutputError,
        result: CallResult[S],
        answers: Answers | None = None,
    ) -> bool:
        """Ask once more, quoting the validation error; True when the second reply validates."""
        reask = dataclasses.replace(
            request,
            history=(*request.history, ("user", request.prompt), ("assistant", reply)),
            prompt=REASK.format(error=first),
        )
        try:
            again = await self._generate(reask, answers)
        except Exception as exc:  # the first reply's tokens and cost still count
            failed = self.failure(exc)
            result.error = f"re-ask failed: {failed.error} (first reply: {first})"
            result.attempts += failed.attempts
            return False
        _merge(result, again)
        result.answered_by = self.backend.answered_by(again.value)
        result.reasked = True
        refused = self._refusal(result.answered_by)
        if refused is not None:
            result.error = f"re-ask {refused} (first reply: {first})"
            return False
        problem = incomplete_reason(again.value, request.max_tokens)
        if problem is not None:
            result.error = f"re-ask {problem} (first reply: {first})"
            return False
        try:
            result.value = parse_structured(again.value.text, schema)
        except StructuredOutputError as second:
            result.error = f"invalid output after re-ask: {second} (first reply: {first})"
            return False
        return True


def _result_from(done: Attempted[Generation], ok: bool, answered_by: str | None) -> CallResult[Any]:
    gen = done.value
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
        cached_tokens_in=gen.cached_tokens or 0,
        answered_by=answered_by,
        blocked=withheld(gen),
    )


def _merge(result: CallResult[Any], again: Attempted[Generation]) -> None:
    gen = again.value
    result.raw = gen.text
    result.attempts += again.attempts
    result.tokens_in += gen.tokens_in or 0
    result.tokens_out += gen.tokens_out or 0
    result.cached_tokens_in += gen.cached_tokens or 0
    result.cost = sum_costs((result.cost, gen.cost))
    result.latency += again.latency
    result.logprobs = gen.logprobs
    result.finish_reason = gen.finish_reason
    result.blocked = withheld(gen)
    if gen.thinking_tokens is not None:
        result.thinking_tokens = (result.thinking_tokens or 0) + gen.thinking_tokens


__all__ = ["ModelClient"]
