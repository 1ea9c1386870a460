"""Model backends behind one interface, chosen by a model spec string.

The map, from the bottom up (nothing imports upward, no circle between files; the
import-linter contracts in pyproject.toml hold it):
- `core/`: the backend interface, model specs and options, lazy (unbuilt) backends;
- `calls/`: the call layer every call goes through: cache, limits, pacing, retries, keys,
  results, structured replies, provenance;
- `litellm/`: talking to providers through litellm; `local/`: transformers and embedding
  checkpoints in this process; `ray/`: local models in Ray actors;
- `factories` (which module builds each backend), `registry` (lazy building and Ray placement),
  `preflight` (what a config needs before any call) and `hub` (one place that builds backends
  and clients from a config).

The names a custom backend or a script needs are importable from here, loaded on first use.
The module paths from before the split (`titjudge.models.litellm_backend`, ...) still import,
with a DeprecationWarning naming the new one (`models._moved`).
"""

from __future__ import annotations

import importlib
from typing import Any

from titjudge.models import _moved

_moved.install()

_EXPORTS: dict[str, str] = {
    "Backend": "titjudge.models.core.base",
    "Capabilities": "titjudge.models.core.base",
    "EmbeddingBackend": "titjudge.models.core.base",
    "GenerateRequest": "titjudge.models.core.base",
    "Generation": "titjudge.models.core.base",
    "ImageInput": "titjudge.models.core.base",
    "PermanentError": "titjudge.models.core.base",
    "TextBackend": "titjudge.models.core.base",
    "TransientError": "titjudge.models.core.base",
    "ModelOptions": "titjudge.models.core.options",
    "ModelSpec": "titjudge.models.core.spec",
    "parse_model_spec": "titjudge.models.core.spec",
    "CallResult": "titjudge.models.calls.results",
    "Usage": "titjudge.models.calls.results",
    "ModelHub": "titjudge.models.hub",
    "build_embedding_backend": "titjudge.models.registry",
    "build_text_backend": "titjudge.models.registry",
}


def __getattr__(name: str) -> Any:
    if name in _moved.MOVED:  # `from titjudge.models import hf_generate`: the old module
        return _moved.moved_module(name)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'titjudge.models' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = sorted(_EXPORTS)
