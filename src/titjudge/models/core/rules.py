"""What judges and config ask of a model's family before any call, declared here and answered
by the provider package serving the spec's backend: how a config section's sampling settles
(`settle`: thinking and `params` checked, an unset temperature resolved), why a model cannot
embed (`cannot_embed`), whether it returns token log-probabilities (`supports_top_logprobs`).

The answering modules are named as strings (as `models.factories` names its builders), imported
only when asked: judges and config import this module alone, never a provider package, and
nothing of litellm itself is imported until a question needs it.
"""

from __future__ import annotations

import importlib
from typing import Any

from titjudge.models.core.options import ModelOptions
from titjudge.records.spec import ModelSpec

#: the module answering each question for `litellm:` models (other backends: see each function)
SAMPLING = "titjudge.models.litellm.sampling"  # light: no litellm import
EMBEDDING = "titjudge.models.litellm.embed_settings"  # light: reads litellm's bundled model map
LOGPROBS = "titjudge.models.litellm.backend"  # imports litellm (its price map kept local)


def settle(section: Any, model: str | None, options: ModelOptions) -> None:
    """Check `section`'s thinking and `params` against `model`'s family and settle its
    `temperature` (see `models.litellm.sampling.settle`, which also gives every other
    backend's default temperature); called by the section's validator."""
    importlib.import_module(SAMPLING).settle(section, model, options)


def cannot_embed(spec: ModelSpec) -> str | None:
    """Why `spec` cannot embed when its provider's model list says it is another kind of model;
    None when it can, or when nothing says otherwise (local `embed:` checkpoints)."""
    if spec.backend != "litellm":
        return None
    found: str | None = importlib.import_module(EMBEDDING).not_an_embedding_model(spec)
    return found


def supports_top_logprobs(spec: ModelSpec) -> bool | None:
    """Whether the provider returns `top_logprobs` for `spec` (litellm's provider table); None
    when it cannot tell or the backend is not litellm (local models always can)."""
    if spec.backend != "litellm":
        return None
    found: bool | None = importlib.import_module(LOGPROBS).supports_top_logprobs(spec.model_id)
    return found


__all__ = ["cannot_embed", "settle", "supports_top_logprobs"]
