"""The Ray actor that holds one `hf:` or `embed:` backend, and what crosses back from it.

The actor builds the real backend from the model spec and options (the weights load in the
actor's process, on its GPU) and serves `generate` / `embed` calls as an async actor, so the
calls in flight on one actor meet in that backend's own micro-batcher. A model error comes back
as a `RemoteFailure` (its class — transient, permanent, quota — and its message, secrets
redacted), never as a Ray traceback; the caller raises it again as the same kind of error.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import Any

import ray

from titjudge.models.core.base import (
    Backend,
    EmbeddingBackend,
    GenerateRequest,
    Generation,
    PermanentError,
    QuotaExhaustedError,
    TextBackend,
    TransientError,
)
from titjudge.models.core.options import ModelOptions
from titjudge.records.spec import parse_model_spec
from titjudge.safety import redact


@dataclass(frozen=True)
class RemoteFailure:
    """A model error inside an actor: its kind, its message (redacted) and any Retry-After."""

    kind: str
    message: str
    retry_after: float | None = None

    def error(self) -> Exception:
        """The exception the caller raises, of the kind the backend gave it."""
        if self.kind == "quota":
            return QuotaExhaustedError(self.message)
        if self.kind == "transient":
            return TransientError(self.message, retry_after=self.retry_after)
        return PermanentError(self.message)


def failure_of(backend: Backend, exc: Exception) -> RemoteFailure:
    """What the call layer would make of `exc` in the run's process: the backend's own
    classification first; an unclassified error is not retried there, and its reason names
    its type, so it comes back as a permanent error saying the same."""
    if not isinstance(exc, (TransientError, PermanentError)):
        exc = _as_exception(backend.classify_error(exc))
    if isinstance(exc, QuotaExhaustedError):
        return RemoteFailure("quota", redact(str(exc)))
    if isinstance(exc, PermanentError):
        return RemoteFailure("permanent", redact(str(exc)))
    if isinstance(exc, TransientError):
        return RemoteFailure("transient", redact(str(exc)), exc.retry_after)
    return RemoteFailure("permanent", redact(f"{type(exc).__name__}: {exc}"))


def _plain(facts: dict[str, Any]) -> dict[str, Any]:
    """Facts as plain JSON types: a library's own str subclass (torch's version string) would
    make the run's process import that library to read it."""
    plain: dict[str, Any] = json.loads(json.dumps(facts, default=str))
    return plain


def _as_exception(value: BaseException) -> Exception:
    return value if isinstance(value, Exception) else RuntimeError(str(value))


@ray.remote
class ModelActor:
    """One loaded `hf:` or `embed:` backend; `kind` is 'text' or 'embed'."""

    def __init__(self, kind: str, model: str, options: ModelOptions):
        from titjudge.models.factories import build_now

        self.backend: Backend | None = None
        self.load_error: str | None = None
        try:
            self.backend = build_now(
                "text" if kind == "text" else "embed", parse_model_spec(model), options
            )
        except Exception as exc:  # reported by facts(): a load error is the model's, not Ray's
            self.load_error = redact(str(exc) or type(exc).__name__)

    async def facts(self) -> dict[str, Any]:
        """What the caller needs of the loaded backend (or why it did not load)."""
        if self.backend is None:
            return {"error": self.load_error}
        capabilities = getattr(self.backend, "capabilities", None)
        return {
            "capabilities": None if capabilities is None else asdict(capabilities),
            "default_concurrency": self.backend.default_concurrency,
            "cache_facts": _plain(self.backend.cache_facts()),
            "describe": _plain(self.backend.describe()),
            "pid": os.getpid(),
        }

    async def generate(self, request: GenerateRequest) -> Generation | RemoteFailure:
        assert isinstance(self.backend, TextBackend)
        try:
            return await self.backend.generate(request)
        except Exception as exc:
            return failure_of(self.backend, exc)

    async def embed(self, texts: list[str]) -> list[list[float]] | RemoteFailure:
        assert isinstance(self.backend, EmbeddingBackend)
        try:
            return await self.backend.embed(texts)
        except Exception as exc:
            return failure_of(self.backend, exc)

    async def embed_each(
        self, texts: list[str]
    ) -> list[list[float] | RemoteFailure] | RemoteFailure:
        """Each text's vector or its own failure; a failure of the whole call as one."""
        assert isinstance(self.backend, EmbeddingBackend)
        try:
            answers = await self.backend.embed_each(texts)
        except Exception as exc:
            return failure_of(self.backend, exc)
        return [
            failure_of(self.backend, _as_exception(a)) if isinstance(a, BaseException) else a
            for a in answers
        ]


__all__ = ["ModelActor", "RemoteFailure", "failure_of"]
