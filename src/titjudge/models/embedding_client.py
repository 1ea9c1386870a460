"""Cached embeddings: each text is keyed alone, so a prompt shared by 13 images (or by
every describer of an ablation) is embedded once."""

from __future__ import annotations

import time
from typing import Any

from titjudge.cache.keys import embedding_key
from titjudge.cache.store import CallCache
from titjudge.models.base import EmbeddingBackend
from titjudge.models.call import CallResult, Usage


class EmbeddingClient:
    def __init__(self, backend: EmbeddingBackend, cache: CallCache, params: dict[str, Any] | None = None):
        self.backend = backend
        self.cache = cache
        self.params = dict(params or {})
        self.usage: dict[str, Usage] = {}

    @property
    def model(self) -> str:
        return str(self.backend.spec)

    async def embed(self, texts: list[str], *, role: str) -> list[CallResult[list[float]]]:
        """One result per text, in order; a backend error fails every text of the call."""
        keys = [embedding_key(self.backend.spec, text, params=self.params) for text in texts]
        results: list[CallResult[list[float]] | None] = []
        for key in keys:
            hit = self.cache.get(key, self.model) if self.backend.cacheable else None
            results.append(CallResult(ok=True, value=list(hit), cached=True) if hit is not None else None)
        todo = [i for i, r in enumerate(results) if r is None]
        if todo:
            started = time.perf_counter()
            try:
                vectors = await self.backend.embed([texts[i] for i in todo])
                if len(vectors) != len(todo):
                    raise RuntimeError(f"backend returned {len(vectors)} vectors for {len(todo)} texts")
            except Exception as exc:  # a failed embedding is a failure record, never a vector
                error = f"{type(exc).__name__}: {exc}"
                for i in todo:
                    results[i] = CallResult(ok=False, error=error, attempts=1)
            else:
                latency = (time.perf_counter() - started) / len(todo)
                for i, vector in zip(todo, vectors, strict=True):
                    vector = [float(x) for x in vector]
                    if self.backend.cacheable:
                        self.cache.set(keys[i], vector, self.model)
                    results[i] = CallResult(ok=True, value=vector, attempts=1, latency=latency)
        final = [r for r in results if r is not None]
        ledger = self.usage.setdefault(role, Usage())
        for result in final:
            ledger.add(result)
        return final
