"""The module paths `titjudge.models` had before it was split into sub-packages, kept
importable: `import titjudge.models.litellm_backend` (or `from titjudge.models.base import
TextBackend`) gives the module at its new home, the same object, with a DeprecationWarning
naming the new path. Nothing in titjudge imports an old path."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

#: old module (under titjudge.models) -> its new home
MOVED: dict[str, str] = {
    "base": "titjudge.models.core.base",
    "spec": "titjudge.models.core.spec",
    "options": "titjudge.models.core.options",
    "thinking": "titjudge.models.core.thinking",
    "lazy": "titjudge.models.core.lazy",
    "execution": "titjudge.models.core.execution",
    "pipeline": "titjudge.models.calls.pipeline",
    "call": "titjudge.models.calls.text_client",
    "embedding_client": "titjudge.models.calls.embedding_client",
    "limits": "titjudge.models.calls.limits",
    "pacing": "titjudge.models.calls.pacing",
    "token_estimate": "titjudge.models.calls.token_estimate",
    "keys": "titjudge.models.calls.keys",
    "results": "titjudge.models.calls.results",
    "structured": "titjudge.models.calls.structured",
    "provenance": "titjudge.models.calls.provenance",
    "images": "titjudge.records.images",
    "litellm_backend": "titjudge.models.litellm.backend",
    "litellm_router": "titjudge.models.litellm.router",
    "litellm_embed": "titjudge.models.litellm.embed",
    "litellm_embed_settings": "titjudge.models.litellm.embed_settings",
    "litellm_settings": "titjudge.models.litellm.settings",
    "litellm_reply": "titjudge.models.litellm.reply",
    "provider_schema": "titjudge.models.litellm.schemas",
    "hf": "titjudge.models.local.hf",
    "hf_generate": "titjudge.models.local.hf_generate",
    "hf_plan": "titjudge.models.local.hf_plan",
    "embed": "titjudge.models.local.embed",
    "embed_st": "titjudge.models.local.embed_st",
    "embed_plan": "titjudge.models.local.embed_plan",
    "local_common": "titjudge.models.local.common",
    "replay": "titjudge.models.local.replay",
    "ray_backend": "titjudge.models.ray.backend",
    "ray_session": "titjudge.models.ray.session",
    "ray_actors": "titjudge.models.ray.actors",
}
_PREFIX = "titjudge.models."


def moved_module(old: str) -> ModuleType:
    """The module `titjudge.models.<old>` now lives in, with a DeprecationWarning."""
    new = MOVED[old]
    warnings.warn(
        f"titjudge.models.{old} moved to {new}; import it from there",
        DeprecationWarning,
        stacklevel=3,
    )
    return importlib.import_module(new)


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str):
        self.old = old

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return moved_module(self.old)

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed at its new home."""


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        old = fullname[len(_PREFIX) :] if fullname.startswith(_PREFIX) else ""
        if old not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(old))


def install() -> None:
    """Make the old paths importable (once per process)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.append(_Finder())
