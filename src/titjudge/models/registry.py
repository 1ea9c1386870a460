"""Backends registered by spec prefix around lazy factories.

Each factory lives in its own module and imports its heavy library inside, so an
API-only user never needs torch. A missing extra becomes a pip hint. Backends with a plan
(`litellm:` text and embeddings, `hf:`, `embed:`) are handed out unbuilt (`models.lazy.LazyBackend`) unless asked for
eagerly: they load litellm or the weights on the first call that misses the cache. With
`run.execution.backend: ray` (`models.execution`), `hf:` and `embed:` models are built as
Ray actors (`models.ray_backend`) from the same plan.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from titjudge.errors import MissingDependencyError, ModelSpecError, install_hint
from titjudge.models.base import Backend, EmbeddingBackend, TextBackend
from titjudge.models.execution import ExecutionOptions
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
    spec: ModelSpec | str,
    options: ModelOptions,
    *,
    lazy: bool = False,
    execution: ExecutionOptions | None = None,
) -> TextBackend:
    """Build the backend that generates text for `spec` (`lazy`: unbuilt where it has a plan;
    `execution`: where a local model runs)."""
    spec = parse_model_spec(spec) if isinstance(spec, str) else spec
    target = _TEXT_FACTORIES.get(spec.backend)
    if target is None:
        raise ModelSpecError(
            f"{spec}: the '{spec.backend}:' backend makes embeddings, not text; "
            f"use one of {', '.join(p + ':' for p in _TEXT_FACTORIES)} here"
        )
    return _made(target, _TEXT_PLANS, spec, options, lazy, "text", execution)  # type: ignore[return-value]


def build_embedding_backend(
    spec: ModelSpec | str,
    options: ModelOptions,
    *,
    lazy: bool = False,
    execution: ExecutionOptions | None = None,
) -> EmbeddingBackend:
    """Build the backend that embeds texts for `spec` (`lazy`: unbuilt where it has a plan;
    `execution`: where a local model runs)."""
    spec = parse_model_spec(spec) if isinstance(spec, str) else spec
    target = _EMBED_FACTORIES.get(spec.backend)
    if target is None:
        raise ModelSpecError(
            f"{spec}: embedding judges need an embedding backend ({', '.join(p + ':' for p in _EMBED_FACTORIES)}), "
            f"not '{spec.backend}:'"
        )
    return _made(target, _EMBED_PLANS, spec, options, lazy, "embed", execution)  # type: ignore[return-value]


def _made(
    target: str,
    plans: dict[str, str],
    spec: ModelSpec,
    options: ModelOptions,
    lazy: bool,
    kind: str,
    execution: ExecutionOptions | None,
) -> Backend:
    moved = execution is not None and execution.moves(spec)
    if moved:
        from titjudge.models.ray_backend import check_use

        check_use(spec, options)

    def build() -> Backend:
        if moved:
            from titjudge.models.ray_backend import build as build_in_actors

            assert execution is not None
            return build_in_actors(kind, spec, options, execution)
        built: Backend = _load(target, spec)(spec, options)
        return built

    planner = plans.get(spec.backend) if lazy else None
    plan = _load(planner, spec)(spec, options) if planner is not None else None
    if plan is None:  # eager, or not enough known without loading it (an uncached hub id)
        return build()
    if moved:
        from titjudge.models.ray_backend import plan_in_actors

        assert execution is not None
        plan = plan_in_actors(plan, execution)
    return LazyBackend(spec, plan, build)
