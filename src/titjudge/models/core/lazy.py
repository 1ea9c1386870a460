"""Backends that load nothing until a call misses the cache.

A fully cached re-run needs only cache keys, and a key needs only what the config says (the
model spec, its parameters, the thinking switch): not litellm (~3 s to import), not torch, not
a model's weights. So `litellm:`, `hf:` and `embed:` backends start as a `LazyBackend`: what a run
must know before any call (capabilities, what enters the keys, the run record) comes from a
`BackendPlan` worked out from the config with light checks only, and the real backend is built
the first time a call has to be sent, in a worker thread, outside the model's limiter and
timeout (loading an 8B model can take minutes; that is not the first call's latency).

A build that fails is remembered: every call of that model then fails at once with the
build's error (a failure record per call, never a retry of the build). A build refused for
absent credentials (`MissingCredentialsError`) is not a failure record: it stops the run, since
every later call of the model would be refused alike (credentials are checked only here, so a
fully cached re-run needs no key).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from titjudge.errors import ModelSpecError
from titjudge.models.core.base import (
    Backend,
    Capabilities,
    EmbeddingBackend,
    GenerateRequest,
    Generation,
    MissingCredentialsError,
    PermanentError,
    TextBackend,
)
from titjudge.models.core.image_limit import ImageLimit
from titjudge.records.spec import ModelSpec

log = logging.getLogger(__name__)

#: one build at a time in a process: two threads importing litellm (or torch) for the first
#: time at once can see a half-initialised module, and two local models loading together
#: would need both their peaks of memory at once
_BUILDING = threading.Lock()


@dataclass(frozen=True)
class BackendPlan:
    """What a run knows of a backend before building it, from the config alone."""

    capabilities: Capabilities = Capabilities()
    #: the limiter's default when the config sets no `concurrency` (before the build; the
    #: built backend's own default replaces it if no call has been limited yet)
    default_concurrency: int = 16
    #: what enters every cache key besides the request and `params` (as Backend.cache_facts)
    cache_facts: dict[str, Any] = field(default_factory=dict)
    #: the run record's facts while the backend is not built (never secrets)
    facts: dict[str, Any] = field(default_factory=dict)
    #: an embedding backend's texts per request (EmbeddingBackend.max_batch)
    max_batch: int | None = None
    #: the provider's byte limits on images (Backend.image_limit), known from the spec alone
    image_limit: ImageLimit | None = None
    #: the thinking tokens the backend will allow beyond max_tokens (Backend.thinking_reserve)
    thinking_reserve: int | None = None


class LazyBackend(TextBackend, EmbeddingBackend):
    """Stands in for a text or embedding backend until a call must really be made."""

    def __init__(self, spec: ModelSpec, plan: BackendPlan, build: Callable[[], Backend]):
        super().__init__(spec)
        self.plan = plan
        self.capabilities = plan.capabilities
        self.default_concurrency = plan.default_concurrency
        self.max_batch = plan.max_batch
        self._build = build
        self._lock: asyncio.Lock | None = None
        self.real: Backend | None = None
        self._error: Exception | None = None
        #: called with the real backend once it is built (the hub resizes the limiter)
        self.on_built: list[Callable[[Backend], None]] = []

    @property
    def built(self) -> bool:
        return self.real is not None

    async def ready(self) -> None:
        """Build the real backend once (in a thread); a failed build re-raises its error."""
        if self.real is not None:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.real is None and self._error is None:
                log.info("%s: first call not in the cache, loading the backend", self.spec)
                try:
                    real = await asyncio.to_thread(self._build_alone)
                except Exception as exc:  # every later call of this model fails with this
                    self._error = exc
                else:
                    self._error = self._disagreement(real)
                    if self._error is None:
                        self.real = real
                        for hook in self.on_built:
                            hook(real)
        if isinstance(self._error, MissingCredentialsError):
            raise MissingCredentialsError(self.spec, self._error.variables)
        if self._error is not None:
            raise PermanentError(f"{self.spec}: cannot load the backend: {self._error}")

    def _build_alone(self) -> Backend:
        with _BUILDING:
            return self._build()

    def _disagreement(self, real: Backend) -> Exception | None:
        """The run's judges were checked against the plan's capabilities: a built model that
        cannot do what the plan said is an error for every call, not a wrong answer."""
        have = getattr(real, "capabilities", None)
        if isinstance(real, TextBackend) and have is not None and have != self.plan.capabilities:
            return ModelSpecError(
                f"the loaded model's capabilities ({have}) differ from those read from its "
                f"config ({self.plan.capabilities})"
            )
        return None

    async def generate(self, request: GenerateRequest) -> Generation:
        await self.ready()
        assert isinstance(self.real, TextBackend)
        return await self.real.generate(request)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        await self.ready()
        assert isinstance(self.real, EmbeddingBackend)
        return await self.real.embed(texts)

    async def embed_each(self, texts: list[str]) -> list[list[float] | BaseException]:
        await self.ready()
        assert isinstance(self.real, EmbeddingBackend)
        return await self.real.embed_each(texts)

    async def embed_answered(
        self, texts: list[str]
    ) -> tuple[list[list[float] | BaseException], str | None]:
        await self.ready()
        assert isinstance(self.real, EmbeddingBackend)
        return await self.real.embed_answered(texts)

    async def embed_images(self, images: list[bytes]) -> list[list[float] | BaseException]:
        await self.ready()
        assert isinstance(self.real, EmbeddingBackend)
        return await self.real.embed_images(images)

    def batch_api(self) -> Any:
        """The built backend's batch API (None before the build: `ready()` first)."""
        real = self.real
        return real.batch_api() if isinstance(real, TextBackend | EmbeddingBackend) else None

    def classify_error(self, exc: BaseException) -> BaseException:
        return self.real.classify_error(exc) if self.real is not None else exc

    def answered_by(self, generation: Generation) -> str | None:
        # a generation exists only once the real backend is built
        return self.real.answered_by(generation) if self.real is not None else None

    def cache_facts(self) -> dict[str, Any]:
        return dict(self.plan.cache_facts)

    def image_limit(self) -> ImageLimit | None:
        return self.plan.image_limit

    def thinking_reserve(self) -> int | None:
        return self.plan.thinking_reserve

    def describe(self) -> dict[str, Any]:
        if self.real is not None:
            return self.real.describe()
        return {
            **super().describe(),
            **self.plan.facts,
            "loaded": False,
            "why_not_loaded": "every call of this model was answered from the cache",
        }

    async def aclose(self) -> None:
        if self.real is not None:
            await self.real.aclose()


__all__ = ["BackendPlan", "LazyBackend"]
