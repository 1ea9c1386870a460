"""Cached embeddings: each text is keyed alone, so a prompt shared by 13 images (or by
every describer of an ablation) is embedded once, even when those images are judged
at the same moment: concurrent requests for one text share one computation."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from titjudge.cache.store import CallCache
from titjudge.models.base import EmbeddingBackend
from titjudge.models.keys import embedding_key
from titjudge.models.results import CallResult, Usage


class EmbeddingClient:
    def __init__(
        self, backend: EmbeddingBackend, cache: CallCache, params: dict[str, Any] | None = None
    ):
        self.backend = backend
        self.cache = cache
        self.params = dict(params or {})
        self.usage: dict[str, Usage] = {}
        self._inflight: dict[str, asyncio.Future[CallResult[list[float]]]] = {}

    @property
    def model(self) -> str:
        return str(self.backend.spec)

    async def embed(self, texts: list[str], *, role: str) -> list[CallResult[list[float]]]:
        """One result per text, in order; a backend error fails every text it computed."""
        keys = [embedding_key(self.backend.spec, text, params=self.params) for text in texts]
        results: list[CallResult[list[float]] | None] = [None] * len(texts)
        waiting: dict[int, asyncio.Future[CallResult[list[float]]]] = {}
        owned: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            if key in self._inflight:
                waiting[i] = self._inflight[key]
            elif key in owned:
                owned[key].append(i)
            else:
                hit = self.cache.get(key, self.model) if self.backend.cacheable else None
                if hit is not None:
                    results[i] = CallResult(ok=True, value=list(hit), cached=True)
                else:
                    owned[key] = [i]
                    self._inflight[key] = asyncio.get_running_loop().create_future()
        if owned:
            await self._compute(owned, texts, results)
        for i, future in waiting.items():
            shared = await asyncio.shield(future)
            results[i] = CallResult(
                ok=shared.ok, value=shared.value, error=shared.error, cached=True
            )
        final = [r for r in results if r is not None]
        ledger = self.usage.setdefault(role, Usage())
        for result in final:
            ledger.add(result)
        return final

    async def _compute(
        self,
        owned: dict[str, list[int]],
        texts: list[str],
        results: list[CallResult[list[float]] | None],
    ) -> None:
        started = time.perf_counter()
        firsts = [indices[0] for indices in owned.values()]
        try:
            try:
                vectors = await self.backend.embed([texts[i] for i in firsts])
                if len(vectors) != len(firsts):
                    raise RuntimeError(
                        f"backend returned {len(vectors)} vectors for {len(firsts)} texts"
                    )
            except Exception as exc:  # a failed embedding is a failure record, never a vector
                failed = CallResult[list[float]](
                    ok=False, error=f"{type(exc).__name__}: {exc}", attempts=1
                )
                computed = [failed] * len(firsts)
            else:
                latency = (time.perf_counter() - started) / len(firsts)
                computed = [
                    CallResult(ok=True, value=[float(x) for x in v], attempts=1, latency=latency)
                    for v in vectors
                ]
            for (key, indices), result in zip(owned.items(), computed, strict=True):
                if result.ok and self.backend.cacheable:
                    self.cache.set(key, result.value, self.model)
                self._inflight[key].set_result(result)
                results[indices[0]] = result
                for i in indices[1:]:
                    results[i] = CallResult(
                        ok=result.ok, value=result.value, error=result.error, cached=True
                    )
        finally:
            for key in owned:  # never leave a waiter hanging, even when this task is cancelled
                future = self._inflight.pop(key)
                if not future.done():
                    future.cancel()
