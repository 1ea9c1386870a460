"""Backends registered by spec prefix around lazy factories.

Each factory lives in its own module (`models.factories` names them) and imports its heavy
library inside, so an API-only user never needs torch. A missing extra becomes a pip hint.
Backends with a plan (`litellm:` text and embeddings, `hf:`, `embed:`) are handed out unbuilt
(`models.core.lazy.LazyBackend`) unless asked for eagerly: they load litellm or the weights on
the first call that misses the cache. With `run.execution.backend: ray`
(`models.core.execution`), `hf:` and `embed:` models are built as Ray actors
(`models.ray.backend`) from the same plan.
"""

from __future__ import annotations

from titjudge.models.core.base import Backend, EmbeddingBackend, TextBackend
from titjudge.models.core.execution import ExecutionOptions
from titjudge.models.core.lazy import LazyBackend
from titjudge.models.core.options import ModelOptions
from titjudge.models.factories import Kind, build_now, factory_of, plan_of
from titjudge.records.spec import ModelSpec, parse_model_spec


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
    return _made("text", spec, options, lazy, execution)  # type: ignore[return-value]


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
    return _made("embed", spec, options, lazy, execution)  # type: ignore[return-value]


def _made(
    kind: Kind,
    spec: ModelSpec,
    options: ModelOptions,
    lazy: bool,
    execution: ExecutionOptions | None,
) -> Backend:
    factory_of(kind, spec)  # an unknown pairing of backend and kind fails here, before a plan
    moved = execution is not None and execution.moves(spec)
    if moved:
        from titjudge.models.ray.backend import check_use

        check_use(spec, options)

    def build() -> Backend:
        if moved:
            from titjudge.models.ray.backend import build as build_in_actors

            assert execution is not None
            return build_in_actors(kind, spec, options, execution)
        return build_now(kind, spec, options)

    plan = plan_of(kind, spec, options) if lazy else None
    if plan is None:  # eager, or not enough known without loading it (an uncached hub id)
        return build()
    if moved:
        from titjudge.models.ray.backend import plan_in_actors

        assert execution is not None
        plan = plan_in_actors(plan, execution)
    return LazyBackend(spec, plan, build)
