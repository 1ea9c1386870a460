"""Embedding calls, through the same pipeline as every other model call.

Each text is keyed alone, so a prompt shared by 13 images (or by every describer of an
ablation) is embedded once, even when those images are judged at the same moment: concurrent
requests for one text share one computation. The texts of one `embed` call that are neither
cached nor in flight go to the backend together, in requests of at most the backend's
`max_batch` texts (a provider's limit), each under the model's limits, retries and timeout;
a failed request is a failure record for each of its texts, never cached. A reply is checked
before it is kept: one finite, non-zero vector per text, all of one length.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Any

from titjudge.cache.store import CallCache
from titjudge.models.base import EmbeddingBackend
from titjudge.models.keys import embedding_key
from titjudge.models.limits import Limiter
from titjudge.models.options import ModelOptions
from titjudge.models.pipeline import CallPipeline, Computed
from titjudge.models.results import CallResult
from titjudge.models.token_estimate import embedding_tokens


class EmbeddingClient(CallPipeline[EmbeddingBackend]):
    """Drives one embedding backend: one vector per text, cached per text."""

    def __init__(
        self, backend: EmbeddingBackend, cache: CallCache, limiter: Limiter, options: ModelOptions
    ):
        super().__init__(backend, cache, limiter, options)
        self.params = dict(options.params)

    async def embed(self, texts: list[str], *, role: str) -> list[CallResult[list[float]]]:
        """One result per text, in order; a failed request fails every text it carried."""
        keys = [embedding_key(self.backend.spec, text, params=self.params) for text in texts]

        async def compute(positions: list[int]) -> list[Computed]:
            todo = [texts[i] for i in positions]
            size = self.backend.max_batch or len(todo)
            requests = [todo[start : start + size] for start in range(0, len(todo), size)]
            done = await asyncio.gather(*(self._embed_call(batch) for batch in requests))
            return [computed for batch in done for computed in batch]

        return await self._run(role, [(key, key) for key in keys], _vector_hit, compute)

    async def _embed_call(self, texts: list[str]) -> list[Computed]:
        try:
            tokens = embedding_tokens(texts) if self.limiter.tpm_pacer is not None else 0
            done = await self._attempt(lambda: self.backend.embed(texts), tokens)
            vectors = _vectors(done.value, len(texts))
        except Exception as exc:  # a failed embedding is a failure record, never a vector
            failed = self._failure(exc)
            return [(dataclasses.replace(failed), None) for _ in texts]
        latency = done.latency / len(texts)
        return [
            (CallResult(ok=True, value=vector, attempts=done.attempts, latency=latency), vector)
            for vector in vectors
        ]


def _vector_hit(hit: Any) -> CallResult[Any] | None:
    if not isinstance(hit, list):
        return None
    return CallResult(ok=True, value=[float(x) for x in hit], cached=True)


class InvalidEmbeddingError(Exception):
    """The backend answered, but not with one finite, non-zero vector per text, all of one
    length."""


def _vectors(raw: Any, expected: int) -> list[list[float]]:
    """The backend's reply checked: one non-empty vector of finite numbers per text, none all
    zeros (it has no direction, so no cosine), all of one length."""
    if len(raw) != expected:
        raise InvalidEmbeddingError(f"backend returned {len(raw)} vectors for {expected} texts")
    vectors = [[float(x) for x in vector] for vector in raw]
    for vector in vectors:
        if not vector or not all(math.isfinite(x) for x in vector):
            raise InvalidEmbeddingError("backend returned an empty or non-finite vector")
        if not any(vector):
            raise InvalidEmbeddingError("backend returned a zero vector")
    lengths = sorted({len(vector) for vector in vectors})
    if len(lengths) > 1:
        raise InvalidEmbeddingError(
            f"backend returned vectors of different lengths ({', '.join(map(str, lengths))})"
        )
    return vectors
