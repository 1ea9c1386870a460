"""Embedding calls, through the same pipeline as every other model call.

Each text is keyed alone, so a prompt shared by 13 images (or by every describer of an
ablation) is embedded once, even when those images are judged at the same moment: concurrent
requests for one text share one computation. The texts of one `embed` call that are neither
cached nor in flight go to the backend together, in requests of at most the backend's
`max_batch` texts (a provider's limit), each under the model's limits, retries and timeout.
A reply is checked before it is kept: one finite, non-zero vector per text, all of one length.

A text's result never depends on which other texts shared its request:
- a transient error (429, 5xx, a timeout, a lost connection) is retried for the whole request
  by the retry policy; once retries are spent, every text of the request is a failure record
  (nothing about them is known, and the next run asks again);
- an `InputRejectedError` (the provider's 400 or 422 for what the request carries: one text
  over the context length, say) is the one failure tied to some text: the request is split in
  two and each half sent on its own, down to single texts, so only a text refused when sent
  alone is a failure record. A refused request was not answered, so no text is paid for twice;
  refusals of every text cost at most 2n - 1 requests for n texts;
- any other error (a key, a model or quota problem, a malformed reply) is the request's, not a
  text's: every text of it is a failure record, and splitting would only repeat it;
- a backend that answers per text (`EmbeddingBackend.embed_each`: a local model, which finds
  the text at fault within its own batch) fails that text alone; a reply whose vector for one
  text is empty, non-finite or zero fails that text alone, and the other vectors are kept.
Failures are never cached; every vector answered is.

Under `batch: true` (`models.calls.batch.collect`) a text's vector comes from its batch job's line,
read by the same checks; a line the provider failed is that text's failure record.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
from typing import Any

from titjudge.models.calls.batch_answers import Answer, Deferred, batch_embedding
from titjudge.models.calls.batch_spend import line_worst
from titjudge.models.calls.estimate_probe import Asked
from titjudge.models.calls.keys import embedding_key, image_embedding_key
from titjudge.models.calls.pipeline import CallPipeline
from titjudge.models.calls.probe import Answers, Computed
from titjudge.models.calls.provenance import refusal
from titjudge.models.calls.sending import Worst
from titjudge.models.calls.token_estimate import embedding_tokens
from titjudge.models.core.base import (
    EmbeddingBackend,
    InputRejectedError,
    PermanentError,
    TransientError,
)
from titjudge.models.core.clients import SEND, CallMode
from titjudge.records.calls import CallResult
from titjudge.records.image_input import ImageInput
from titjudge.safety import redact

log = logging.getLogger(__name__)


class EmbeddingClient(CallPipeline[EmbeddingBackend]):
    """Drives one embedding backend: one vector per text, cached per text."""

    async def embed(
        self, texts: list[str], *, role: str, probe: CallMode
    ) -> list[CallResult[list[float]]]:
        """One result per text, in order; a text fails only for a reason of its own or of
        every request that carried it (see the module's notes). `probe`: the call's mode
        (`models.core.clients.CallMode`; `SEND`: answered, computing the misses)."""
        keys = [embedding_key(self.backend.spec, text, params=self.params) for text in texts]
        if probe is not SEND:  # under a cache probe: what each would send (`titjudge estimate`)
            for key, text in zip(keys, texts, strict=True):
                probe.note(key, Asked(role, "embedding", text=text))

        async def compute(positions: list[int], answers: Answers | None) -> list[Computed]:
            todo = [texts[i] for i in positions]
            size = self.backend.max_batch or len(todo)
            requests = [todo[start : start + size] for start in range(0, len(todo), size)]
            done = await asyncio.gather(*(self._embed_call(batch, answers) for batch in requests))
            return [computed for batch in done for computed in batch]

        def accept(hit: Any) -> CallResult[Any] | None:
            found = _vector_hit(hit)
            if found is not None and self._refusal(found.answered_by, cached=True):
                return None  # another model's vector (require_model: exact): asked again
            return found

        return await self._run(role, [(key, key) for key in keys], accept, compute, probe=probe)

    async def embed_images(
        self, images: list[ImageInput], *, role: str, probe: CallMode
    ) -> list[CallResult[list[float]]]:
        """One result per image, in order, in the space `embed` puts texts in (a CLIP-family
        model, `clip:`): keyed by the image's content hash, so an image several pairs show is
        embedded once; checked, cached, shared and failed as texts are. A deferred image's
        bytes are read only when it must really be sent."""
        keys = [
            image_embedding_key(self.backend.spec, image.sha256, self.params) for image in images
        ]
        if probe is not SEND:
            for key in keys:
                probe.note(key, Asked(role, "embedding", text=""))

        async def compute(positions: list[int], answers: Answers | None) -> list[Computed]:
            if answers is not None:  # no provider takes images into embedding batch jobs
                raise PermanentError(f"{self.model}: images are not sent as batch jobs")
            todo = [images[i] for i in positions]
            size = self.backend.max_batch or len(todo)
            requests = [todo[start : start + size] for start in range(0, len(todo), size)]
            done = await asyncio.gather(*(self._image_call(batch) for batch in requests))
            return [computed for batch in done for computed in batch]

        def accept(hit: Any) -> CallResult[Any] | None:
            found = _vector_hit(hit)
            if found is not None and self._refusal(found.answered_by, cached=True):
                return None
            return found

        return await self._run(role, [(key, key) for key in keys], accept, compute, probe=probe)

    async def _image_call(self, images: list[ImageInput]) -> list[Computed]:
        """One request for `images` (their bytes read first); an image the model cannot read
        is that image's failure record, the others' vectors kept."""
        try:
            loaded = [await image.load() for image in images]
            done = await self._attempt(
                lambda: self.backend.embed_images([image.data for image in loaded]),
                0,
                Worst(0, 0, "item"),
            )
            vectors = _answers(done.value, len(images))
        except Exception as exc:  # a failed embedding is a failure record, never a vector
            failed = self.failure(exc)
            return [(dataclasses.replace(failed), None) for _ in images]
        sizes = [0] * len(images)
        return self._computed(
            sizes, vectors, self.backend.spec.model_id, done.attempts, done.latency
        )

    def _refusal(self, answered_by: str | None, *, cached: bool = False) -> str | None:
        """Why `run.require_model: exact` refuses a vector from `answered_by` (None: kept)."""
        if self.require_model != "exact":
            return None
        return refusal(self.model, answered_by, cached=cached)

    async def _embed_call(self, texts: list[str], answers: Answers | None = None) -> list[Computed]:
        """One request for `texts`; refused for what it carries, it is split in two and
        each half asked alone, down to single texts."""
        if answers is not None:  # a batch job's reply, read as if it had just come
            return self._batch_call(texts, answers)
        try:
            tokens = embedding_tokens(texts)
            done = await self._attempt(
                lambda: self.backend.embed_answered(texts),
                tokens if self.limiter.tpm_pacer is not None else 0,
                Worst(tokens, 0, "item"),  # embeddings score items, never pairs
            )
            raw, answered_by = done.value
            vectors = _answers(raw, len(texts))
        except Exception as exc:  # a failed embedding is a failure record, never a vector
            if isinstance(exc, InputRejectedError) and len(texts) > 1:
                log.info(
                    "%s refused a request of %d texts for what it carries (%s); asking each "
                    "half alone",
                    self.model,
                    len(texts),
                    redact(str(exc)),
                )
                half = len(texts) // 2
                first, second = await asyncio.gather(
                    self._embed_call(texts[:half]), self._embed_call(texts[half:])
                )
                return first + second
            failed = self.failure(exc)
            return [(dataclasses.replace(failed), None) for _ in texts]
        sizes = [embedding_tokens([text]) for text in texts]
        return self._computed(sizes, vectors, answered_by, done.attempts, done.latency)

    def _batch_call(self, texts: list[str], answers: dict[str, Answer]) -> list[Computed]:
        """`texts` answered by a batch job's line (`models.calls.batch.collect`): checked and kept as
        an online reply is, at the batch price; `Deferred` (raised on) while it has none."""
        try:
            embedded = batch_embedding(self.backend, texts, answers)
            vectors = _answers(embedded.vectors, len(texts))
        except Deferred as deferred:  # into a job: its worst case, for the run's budget
            deferred.worst_usd = self._batch_worst(texts)
            raise
        except Exception as exc:  # the line failed: a failure record, never a vector
            failed = self.failure(exc)
            return [(dataclasses.replace(failed), None) for _ in texts]
        each = embedded.cost / len(texts) if embedded.cost is not None else None
        sizes = [embedding_tokens([text]) for text in texts]
        return self._computed(sizes, vectors, embedded.model, 1, 0.0, batch=True, batch_cost=each)

    def _batch_worst(self, texts: list[str]) -> float:
        """A batch line's worst case under the run's budget (`batch_spend.line_worst`)."""
        tokens = embedding_tokens(texts) if self.budget is not None else 0
        return line_worst(self.budget, self.backend.spec, self.options.price, tokens, 0)

    def _computed(
        self,
        sizes: list[int],
        answers: list[list[float] | BaseException],
        answered_by: str | None,
        attempts: int,
        latency: float,
        *,
        batch: bool = False,
        batch_cost: float | None = None,
    ) -> list[Computed]:
        """Each input's result from a checked reply (`sizes`: each one's input tokens). A
        `batch` reply costs half the `price` option where the model has one, else `batch_cost`
        (its line's batch price per text)."""
        latency = latency / len(sizes)
        refused = self._refusal(answered_by)
        computed: list[Computed] = []
        for size, answer in zip(sizes, answers, strict=True):
            if isinstance(answer, BaseException):
                computed.append((self._text_failure(answer, attempts), None))
            elif refused is not None:  # a failure record naming both models, never cached
                refusal_record: CallResult[Any] = CallResult(
                    ok=False, error=refused, attempts=attempts, latency=latency
                )
                refusal_record.answered_by = answered_by
                computed.append((refusal_record, None))
            else:
                result = CallResult(ok=True, value=answer, attempts=attempts, latency=latency)
                if self.rates is not None:  # a local model's $0, or its `price` option
                    full = self.rates.cost(size, 0)
                    result.cost = full / 2 if batch else full
                elif batch:
                    result.cost = batch_cost
                result.answered_by = answered_by
                stored: Any = (
                    {"vector": answer, "answered_by": answered_by} if answered_by else answer
                )
                computed.append((result, stored))
        return computed

    def _text_failure(self, exc: BaseException, attempts: int) -> CallResult[Any]:
        """One text's own error in an answered request, as its failure record."""
        if not isinstance(exc, (TransientError, PermanentError)):
            exc = self.backend.classify_error(exc)
        if not isinstance(exc, Exception):
            exc = RuntimeError(str(exc) or type(exc).__name__)
        exc._titjudge_attempts = attempts  # type: ignore[attr-defined]
        return self.failure(exc)


def _vector_hit(hit: Any) -> CallResult[Any] | None:
    """A cached vector: a plain list (an entry that records no answering model, as every
    entry written before titjudge recorded it), or `{"vector", "answered_by"}`."""
    answered_by = None
    if isinstance(hit, dict) and isinstance(hit.get("vector"), list):
        answered_by = hit.get("answered_by")
        hit = hit["vector"]
    if not isinstance(hit, list):
        return None
    result = CallResult(ok=True, value=[float(x) for x in hit], cached=True)
    result.answered_by = str(answered_by) if answered_by else None
    return result


class InvalidEmbeddingError(Exception):
    """The backend answered, but not with one finite, non-zero vector per text, all of one
    length."""


def _answers(raw: Any, expected: int) -> list[list[float] | BaseException]:
    """The backend's reply checked: per text, a non-empty vector of finite numbers, not all
    zeros (it has no direction, so no cosine), or that text's own error; the vectors all of
    one length. A reply of the wrong size, or of vectors of several lengths (which one is
    right cannot be told), is the whole request's error."""
    if len(raw) != expected:
        raise InvalidEmbeddingError(f"backend returned {len(raw)} vectors for {expected} texts")
    answers: list[list[float] | BaseException] = []
    for answer in raw:
        if isinstance(answer, BaseException):
            answers.append(answer)
            continue
        vector = [float(x) for x in answer]
        if not vector or not all(math.isfinite(x) for x in vector):
            answers.append(InvalidEmbeddingError("backend returned an empty or non-finite vector"))
        elif not any(vector):
            answers.append(InvalidEmbeddingError("backend returned a zero vector"))
        else:
            answers.append(vector)
    lengths = sorted({len(a) for a in answers if not isinstance(a, BaseException)})
    if len(lengths) > 1:
        raise InvalidEmbeddingError(
            f"backend returned vectors of different lengths ({', '.join(map(str, lengths))})"
        )
    return answers
