"""Backends registered by spec prefix around lazy factories.

Each factory lives in its own module and imports its heavy library inside, so an
API-only user never needs torch. A missing extra becomes a pip hint. Backends with a plan
(`litellm:` text and embeddings, `hf:`, `embed:`) are handed out unbuilt (`models.lazy.LazyBackend`) unless asked for
eagerly: they load litellm or the weights on the first call that misses the cache.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from titjudge.errors import MissingDependencyError, ModelSpecError, install_hint
from titjudge.models.base import Backend, EmbeddingBackend, TextBackend
from titjudge.models.lazy import LazyBackend
from titjudge.models.options import ModelOptions
from titjudge.models.spec import ModelSpec, parse_model_spec

#: backend -> module:function building its TextBackend, and its EmbeddingBackend
_TEXT_FACTORIES: dict[str, str] = {
    "litellm": "titjudge.models.litellm_backend:build",
    "hf": "titjudge.models.hf:build",
    "replay": "titjudge.models.replay:build",
}
_EMBED_FACTORIES: dict[str, str] = {
    "embed": "titjudge.models.embed:build",
    "litellm": "titjudge.models.litellm_embed:build",
}
#: backend -> module:function giving its BackendPlan from the config alone (light imports only)
_TEXT_PLANS: dict[str, str] = {
    "litellm": "titjudge.models.litellm_settings:plan",
    "hf": "titjudge.models.hf_plan:plan",
}
_EMBED_PLANS: dict[str, str] = {
    "embed": "titjudge.models.embed_plan:plan",
    "litellm": "titjudge.models.litellm_embed_settings:plan",
}
#: which pip extra provides each backend's libraries
_EXTRAS: dict[str, str] = {"hf": "local", "embed": "local"}


def _load(target: str, spec: ModelSpec) -> Callable[..., Any]:
    module_name, _, func = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name or "a dependency"
        if missing.split(".")[0] == "titjudge":
            raise
        extra = _EXTRAS.get(spec.backend)
        hint = install_hint(extra) if extra else f"pip install {missing}"
        raise MissingDependencyError(
            f"the '{spec.backend}:' backend needs {missing!r}, which is not installed; install it with: {hint}"
        ) from None
    return getattr(module, func)


def build_text_backend(
    spec: ModelSpec | str, options: ModelOptions, *, lazy: bool = False
) -> TextBackend:
    """Build the backend that generates text for `spec` (`lazy`: unbuilt where it has a plan)."""
    spec = parse_model_spec(spec) if isinstance(spec, str) else spec
    target = _TEXT_FACTORIES.get(spec.backend)
    if target is None:
        raise ModelSpecError(
            f"{spec}: the '{spec.backend}:' backend makes embeddings, not text; "
            f"use one of {', '.join(p + ':' for p in _TEXT_FACTORIES)} here"
        )
    return _made(target, _TEXT_PLANS, spec, options, lazy)  # type: ignore[return-value]


def build_embedding_backend(
    spec: ModelSpec | str, options: ModelOptions, *, lazy: bool = False
) -> EmbeddingBackend:
    """Build the backend that embeds texts for `spec` (`lazy`: unbuilt where it has a plan)."""
    spec = parse_model_spec(spec) if isinstance(spec, str) else spec
    target = _EMBED_FACTORIES.get(spec.backend)
    if target is None:
        raise ModelSpecError(
            f"{spec}: embedding judges need an embedding backend ({', '.join(p + ':' for p in _EMBED_FACTORIES)}), "
            f"not '{spec.backend}:'"
        )
    return _made(target, _EMBED_PLANS, spec, options, lazy)  # type: ignore[return-value]


def _made(
    target: str, plans: dict[str, str], spec: ModelSpec, options: ModelOptions, lazy: bool
) -> Backend:
    planner = plans.get(spec.backend) if lazy else None
    if planner is None:
        backend: Backend = _load(target, spec)(spec, options)
        return backend
    plan = _load(planner, spec)(spec, options)
    if plan is None:  # not enough known without loading it (an uncached hub id): build now
        built: Backend = _load(target, spec)(spec, options)
        return built
    return LazyBackend(spec, plan, lambda: _load(target, spec)(spec, options))
