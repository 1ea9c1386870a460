"""A role's sampling settings checked against its model family's rules, at config load.

The describer and every sampled judge carry a temperature (titjudge's default 0: greedy). For a
family that takes only the provider's default (OpenAI reasoning models; Claude while it thinks)
or whose provider asks to keep the default (Gemini 3), an unset temperature becomes `None`:
nothing is sent, and the cache key and the run record say "provider default". A setting the
provider refuses is a config error before any request; a setting against Google's Gemini 3
guidance is sent, with a one-line warning. Rules and sources: `models.litellm.families`.
"""

from __future__ import annotations

import logging
from typing import Any

from titjudge.errors import SettingRefused
from titjudge.models.core.options import ModelOptions
from titjudge.models.core.thinking import ThinkingPlan
from titjudge.models.litellm.families import Family, family_of
from titjudge.models.litellm.thinking import plan_thinking
from titjudge.records.spec import ModelSpec, parse_model_spec

log = logging.getLogger(__name__)

PROVIDER_DEFAULT = "provider default"
GEMINI3_GUIDANCE = (
    "Google's Gemini 3 guide strongly recommends keeping temperature at its default 1.0 (lower "
    "values may cause looping or degraded reasoning: https://ai.google.dev/gemini-api/docs/gemini-3)"
)
#: sampling parameters that OpenAI's gpt-5.1 and later take again at reasoning_effort none
_OPENAI_NONE_EFFORT_OK = ("top_p", "logprobs", "top_logprobs")


class SamplingError(SettingRefused):
    """A sampling setting the model's provider refuses."""


def temperature_rule(family: Family, plan: ThinkingPlan) -> str:
    """The family's temperature rule under this thinking plan."""
    if family.key == "openai_reasoning" and plan.kwargs.get("reasoning_effort") == "none":
        return "any"  # gpt-5.1+ without reasoning takes temperature (litellm's GPT-5 config)
    if family.temperature == "default_only_thinking":
        thinking = plan.kwargs.get("thinking") or {}
        return "default_only" if thinking.get("budget_tokens") else "any"
    return family.temperature


def role_temperature(
    model: str | None, options: ModelOptions, temperature: float | None, explicit: bool
) -> float | None:
    """The temperature a role sends to `model` (None: the provider's default, nothing sent).
    `explicit`: the config set it. SamplingError (or ThinkingError) for what the provider
    refuses, thinking and `params` included."""
    if model is None:
        return temperature
    spec = parse_model_spec(model)
    if spec.backend != "litellm":
        if temperature is None:
            raise SamplingError(
                f"{spec}: temperature null (the provider's default) is for litellm: models; "
                "set a number",
                "temperature",
                fix="0",
            )
        return temperature
    family = family_of(spec, options.api_base)
    plan = plan_thinking(spec, options.thinking, options.api_base)
    rule = temperature_rule(family, plan)
    check_params(spec, family, plan, options.params)
    if temperature is not None and temperature > family.temperature_max:
        raise SamplingError(
            f"{spec} takes a temperature from 0 to {family.temperature_max:g}; got {temperature:g}",
            "temperature",
            fix=f"{family.temperature_max:g}",
        )
    if rule == "default_only":
        if not explicit:
            return None
        if temperature is None or temperature == 1:
            return temperature
        raise SamplingError(
            f"{spec}: {_only_default(family, 'temperature', temperature)}", "temperature", "null"
        )
    if rule == "default_recommended":
        if not explicit:
            return None
        if temperature is not None and temperature != 1:
            _warn(f"{spec}: temperature {temperature:g} is sent; {GEMINI3_GUIDANCE}")
        return temperature
    return temperature


def check_transport(model: str | None, options: ModelOptions) -> None:
    """`transport` is a `litellm:` model's; `direct` only where the model can go direct
    (`models.litellm.wire.body.direct_route`), else a config error saying why."""
    if model is None or options.transport == "auto":
        return
    spec = parse_model_spec(model)
    if spec.backend != "litellm":
        raise SamplingError(
            f"{spec}: transport applies to litellm: models (how a request reaches a "
            f"provider), not {spec.backend}:",
            "transport",
            fix="auto",
        )
    if options.transport != "direct":
        return
    from titjudge.models.litellm.wire.body import direct_route

    family = family_of(spec, options.api_base)
    route = direct_route(spec.model_id, options.api_base, options.params, family.key)
    if isinstance(route, str):
        raise SamplingError(
            f"{spec}: transport direct posts OpenAI's chat-completions wire as it is, which "
            f"this model cannot take: {route}",
            "transport",
            fix="auto",
        )


def settle(section: Any, model: str | None, options: ModelOptions) -> None:
    """Check a config section's thinking and `params` against `model`'s family, and settle its
    `temperature` (when it has one): an unset one becomes None where the family takes only, or
    is advised to keep, the provider's default. Called by the section's validator."""
    check_transport(model, options)
    if "temperature" not in type(section).model_fields:
        if model is not None and parse_model_spec(model).backend == "litellm":
            spec = parse_model_spec(model)
            family = family_of(spec, options.api_base)
            check_params(
                spec,
                family,
                plan_thinking(spec, options.thinking, options.api_base),
                options.params,
            )
        return
    current = section.temperature
    explicit = "temperature" in section.model_fields_set
    resolved = role_temperature(model, options, current, explicit)
    if resolved != current:
        section.__dict__["temperature"] = resolved  # no re-validation: it is settled


def check_params(
    spec: ModelSpec, family: Family, plan: ThinkingPlan, params: dict[str, Any]
) -> None:
    """`params` the provider refuses for this family (and thinking plan) as a SamplingError
    (the first of `params_refused`)."""
    for name, why in params_refused(spec, family, plan, params):
        raise SamplingError(why, f"params.{name}")
    value = params.get("temperature")
    if temperature_rule(family, plan) == "default_recommended" and value not in (1, None):
        _warn(f"{spec}: params.temperature {value} is sent; {GEMINI3_GUIDANCE}")


def refused_param_names(model: str, options: ModelOptions) -> list[str]:
    """The keys of `options.params` that `model`'s family refuses with `options`' thinking
    (none when the thinking itself is refused: that is said first)."""
    spec = parse_model_spec(model)
    try:
        plan = plan_thinking(spec, options.thinking, options.api_base)
    except ValueError:
        return []
    family = family_of(spec, options.api_base)
    return [name for name, _ in params_refused(spec, family, plan, options.params)]


def params_refused(
    spec: ModelSpec, family: Family, plan: ThinkingPlan, params: dict[str, Any]
) -> list[tuple[str, str]]:
    """(name, why) of each key of `params` the provider refuses for this family and thinking
    plan."""
    rule = temperature_rule(family, plan)
    thinking_on = bool((plan.kwargs.get("thinking") or {}).get("budget_tokens"))
    refused = list(family.refused_params) + (
        list(family.refused_with_thinking) if thinking_on else []
    )
    if rule == "any" and family.key == "openai_reasoning":
        refused = [p for p in refused if p not in _OPENAI_NONE_EFFORT_OK]
    found = [
        (
            name,
            f"{spec}: params.{name} is refused by {family.title}"
            + (" while it thinks" if name in family.refused_with_thinking else "")
            + f" ({family.docs}); remove it",
        )
        for name in refused
        if name in params
    ]
    value = params.get("temperature")
    if rule == "default_only" and "temperature" in params and value not in (1, None):
        found.append(
            ("temperature", f"{spec}: params.{_only_default(family, 'temperature', value)}")
        )
    top_p = params.get("top_p")
    if family.key == "claude" and thinking_on and top_p is not None and not 0.95 <= top_p <= 1:
        found.append(
            (
                "top_p",
                f"{spec}: while Claude thinks, top_p must be from 0.95 to 1 ({family.docs}); "
                f"got {top_p}",
            )
        )
    return found


def _only_default(family: Family, name: str, value: Any) -> str:
    why = " while it thinks" if family.temperature == "default_only_thinking" else ""
    return (
        f"{name} {value} is refused: {family.title} takes only the provider's default (1)"
        f"{why} ({family.docs}); remove {name} (titjudge then sends none) or set it to 1"
    )


def _warn(message: str) -> None:
    log.warning(message)


__all__ = [
    "GEMINI3_GUIDANCE",
    "PROVIDER_DEFAULT",
    "SamplingError",
    "check_params",
    "params_refused",
    "refused_param_names",
    "role_temperature",
    "settle",
    "temperature_rule",
]
