"""Which module builds each backend, and how a missing library becomes a pip hint.

The tables name modules as strings (`module:function`), imported only when a backend of that
prefix is built or planned, so an API-only user never needs torch and `--help` imports nothing
of litellm. `build_now` builds a backend in this process; the registry (`models.registry`)
adds lazy building and Ray placement on top, and a Ray actor (`models.ray.actors`) calls
`build_now` itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Literal

from titjudge.errors import MissingDependencyError, ModelSpecError, install_hint
from titjudge.models.core.base import Backend
from titjudge.models.core.lazy import BackendPlan
from titjudge.models.core.options import ModelOptions
from titjudge.records.spec import ModelSpec

Kind = Literal["text", "embed"]

#: backend -> module:function building its TextBackend, and its EmbeddingBackend
TEXT_FACTORIES: dict[str, str] = {
    "litellm": "titjudge.models.litellm.factory:build",
    "hf": "titjudge.models.local.hf:build",
    "replay": "titjudge.models.local.replay:build",
}
EMBED_FACTORIES: dict[str, str] = {
    "embed": "titjudge.models.local.embed:build",
    "clip": "titjudge.models.local.clip:build",
    "litellm": "titjudge.models.litellm.embed:build",
}
#: backend -> module:function giving its BackendPlan from the config alone (light imports only)
TEXT_PLANS: dict[str, str] = {
    "litellm": "titjudge.models.litellm.settings:plan",
    "hf": "titjudge.models.local.hf_plan:plan",
}
EMBED_PLANS: dict[str, str] = {
    "embed": "titjudge.models.local.embed_plan:plan",
    "clip": "titjudge.models.local.embed_plan:clip_plan",
    "litellm": "titjudge.models.litellm.embed_settings:plan",
}
#: which pip extra provides each backend's libraries
EXTRAS: dict[str, str] = {"hf": "local", "embed": "local", "clip": "local"}


def load(target: str, spec: ModelSpec) -> Callable[..., Any]:
    """The function `target` names; a missing third-party library is a MissingDependencyError
    with the pip line that installs it."""
    module_name, _, func = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name or "a dependency"
        if missing.split(".")[0] == "titjudge":
            raise
        extra = EXTRAS.get(spec.backend)
        hint = install_hint(extra) if extra else f"pip install {missing}"
        raise MissingDependencyError(
            f"the '{spec.backend}:' backend needs {missing!r}, which is not installed; install it with: {hint}"
        ) from None
    return getattr(module, func)


def factory_of(kind: Kind, spec: ModelSpec) -> str:
    """The `module:function` building `spec`'s backend of this kind; a backend that does not
    make this kind is a ModelSpecError naming the ones that do."""
    factories = TEXT_FACTORIES if kind == "text" else EMBED_FACTORIES
    target = factories.get(spec.backend)
    if target is not None:
        return target
    makes = ", ".join(p + ":" for p in factories)
    raise ModelSpecError(
        f"{spec}: the '{spec.backend}:' backend makes embeddings, not text; use one of {makes} here"
        if kind == "text"
        else f"{spec}: embedding judges need an embedding backend ({makes}), not '{spec.backend}:'"
    )


def build_now(kind: Kind, spec: ModelSpec, options: ModelOptions) -> Backend:
    """Build `spec`'s backend of this kind in this process, loading its library now."""
    built: Backend = load(factory_of(kind, spec), spec)(spec, options)
    return built


def plan_of(kind: Kind, spec: ModelSpec, options: ModelOptions) -> BackendPlan | None:
    """`spec`'s plan from the config alone (no heavy import), or None where its backend has
    none or cannot know enough without loading (an uncached hub id)."""
    planner = (TEXT_PLANS if kind == "text" else EMBED_PLANS).get(spec.backend)
    if planner is None:
        return None
    plan: BackendPlan | None = load(planner, spec)(spec, options)
    return plan
