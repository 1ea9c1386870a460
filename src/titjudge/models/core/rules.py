"""What judges and config ask of a model's family before any call, declared here and answered
by the provider package serving the spec's backend: how a config section's sampling settles
(`settle`: thinking and `params` checked, an unset temperature resolved), which of a section's
settings a model refuses (`thinking_refused`, `params_refused`, `temperature_refused`: what a
swapped model takes, `config.swap`), why a model cannot
embed (`cannot_embed`), whether it returns token log-probabilities (`supports_top_logprobs`),
whether litellm can route it at all (`unknown_provider`: a misspelt provider).

The answering modules are named as strings (as `models.factories` names its builders), imported
only when asked: judges and config import this module alone, never a provider package, and
nothing of litellm itself is imported until a question needs it.
"""

from __future__ import annotations

import importlib
from typing import Any

from titjudge.models.core.options import ModelOptions
from titjudge.models.core.thinking import ThinkingError, plan_thinking
from titjudge.records.spec import ModelSpec, parse_model_spec

#: the module answering each question for `litellm:` models (other backends: see each function)
SAMPLING = "titjudge.models.litellm.sampling"  # light: no litellm import
THINKING = "titjudge.models.litellm.thinking"  # light: no litellm import
EMBEDDING = "titjudge.models.litellm.embed_settings"  # light: reads litellm's bundled model map
LOGPROBS = "titjudge.models.litellm.backend"  # imports litellm (its price map kept local)
PROVIDERS = "titjudge.models.litellm.provider_names"  # light: litellm's routing rules as tables


def settle(section: Any, model: str | None, options: ModelOptions) -> None:
    """Check `section`'s thinking and `params` against `model`'s family and settle its
    `temperature` (see `models.litellm.sampling.settle`, which also gives every other
    backend's default temperature); called by the section's validator."""
    importlib.import_module(SAMPLING).settle(section, model, options)


def thinking_refused(model: str, options: ModelOptions) -> str | None:
    """Why `model` refuses `options.thinking` (its family's rules, or a local model's); None
    when it takes it."""
    spec = parse_model_spec(model)
    module = importlib.import_module(THINKING) if spec.backend == "litellm" else None
    try:
        if module is not None:
            module.plan_thinking(spec, options.thinking, options.api_base)
        else:
            plan_thinking(spec, options.thinking, options.api_base)
    except ThinkingError as exc:
        return str(exc)
    return None


def params_refused(model: str, options: ModelOptions) -> list[str]:
    """The keys of `options.params` that `model`'s family refuses (with its thinking)."""
    if parse_model_spec(model).backend != "litellm":
        return []
    found: list[str] = importlib.import_module(SAMPLING).refused_param_names(model, options)
    return found


def temperature_refused(model: str, options: ModelOptions, temperature: float | None) -> str | None:
    """Why `model` refuses `temperature` set in a config (with `options`' thinking and params);
    None when it takes it."""
    try:
        importlib.import_module(SAMPLING).role_temperature(model, options, temperature, True)
    except ValueError as exc:
        return str(exc)
    return None


def cannot_embed(spec: ModelSpec) -> str | None:
    """Why `spec` cannot embed when its provider's model list says it is another kind of model;
    None when it can, or when nothing says otherwise (local `embed:` checkpoints)."""
    if spec.backend != "litellm":
        return None
    found: str | None = importlib.import_module(EMBEDDING).not_an_embedding_model(spec)
    return found


def unknown_provider(model: str, options: ModelOptions) -> str | None:
    """'unknown litellm provider ... (did you mean ...?)' when litellm could route `model`
    by none of its rules (at `options.api_base` and with its `params`); None when it could,
    when the tables cannot tell, or for another backend."""
    spec = parse_model_spec(model)
    if spec.backend != "litellm":
        return None
    found: str | None = importlib.import_module(PROVIDERS).unknown_provider(
        spec, options.api_base, options.params
    )
    return found


def supports_top_logprobs(spec: ModelSpec) -> bool | None:
    """Whether the provider returns `top_logprobs` for `spec` (litellm's provider table); None
    when it cannot tell or the backend is not litellm (local models always can)."""
    if spec.backend != "litellm":
        return None
    found: bool | None = importlib.import_module(LOGPROBS).supports_top_logprobs(spec.model_id)
    return found


__all__ = [
    "cannot_embed",
    "params_refused",
    "settle",
    "supports_top_logprobs",
    "temperature_refused",
    "thinking_refused",
    "unknown_provider",
]
