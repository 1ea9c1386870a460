"""What a `litellm:` model's config means, worked out without importing litellm.

The backend sends with these settings; before it is built (see `models.core.lazy`), they give the
run its cache keys (the thinking switch actually sent), its capabilities and its record, so a
fully cached re-run never imports litellm (~3 s).
"""

from __future__ import annotations

import copy
import functools
import os
from dataclasses import dataclass
from typing import Any

from titjudge.errors import ConfigError
from titjudge.models.core.base import Capabilities, MissingCredentialsError
from titjudge.models.core.lazy import BackendPlan
from titjudge.models.core.options import ModelOptions
from titjudge.models.core.thinking import ThinkingError, ThinkingPlan
from titjudge.models.litellm.dialects import DIALECTS, describe
from titjudge.models.litellm.families import (
    Family,
    claude_native_schema,
    family_of,
)
from titjudge.models.litellm.image_limits import image_limit_for
from titjudge.models.litellm.sampling import (
    PROVIDER_DEFAULT,
    SamplingError,
    check_params,
    temperature_rule,
)
from titjudge.models.litellm.thinking import plan_thinking
from titjudge.models.litellm.wire.body import WireRoute, direct_route
from titjudge.records.spec import ModelSpec

#: no backend-specific cap: `run.concurrency` (or the model's own `concurrency`) governs
DEFAULT_CONCURRENCY = 1024
#: litellm providers that reach an OpenAI-compatible server at an api_base (vLLM, SGLang,
#: llama.cpp, Ollama, ...), not a hosted provider's own API
SELF_HOSTED = frozenset(
    {
        "openai",
        "hosted_vllm",
        "openai_like",
        "custom_openai",
        "ollama_chat",
        "lm_studio",
        "llamafile",
    }
)


#: seconds an endpoint of an `api_base` list is left out after it failed (litellm's default)
COOLDOWN_SECONDS = 5.0


@dataclass
class LiteLLMSettings:
    #: one URL, or the endpoints a litellm Router spreads the calls over
    api_base: str | list[str] | None
    api_key_env: str | None
    timeout: float
    #: provider parameters sent with every request (json_schema_mode removed)
    params: dict[str, Any]
    #: how a schema goes with a request (`models.litellm.dialects`): a dialect, or `auto`
    structured: str
    family: str
    thinking: ThinkingPlan
    #: the family's documented rules (models.litellm.families)
    rules: Family
    #: the model: which Claude takes a native schema
    #: the key read from `api_key_env`; None: litellm reads the provider's usual variable
    spec: ModelSpec
    api_key: str | None
    #: where the direct path sends (`models.litellm.wire`), or why the model goes through
    #: litellm
    route: WireRoute | str

    @property
    def direct(self) -> WireRoute | None:
        return self.route if isinstance(self.route, WireRoute) else None

    def transport(self) -> str:
        """The run record's words for how the requests go."""
        if isinstance(self.route, WireRoute):
            return f"direct (aiohttp, OpenAI chat completions to {self.route.url})"
        return f"litellm ({self.route})"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(vision=True, json_schema=self.schema_sent, logprobs=True)

    @property
    def schema_sent(self) -> bool:
        """A response schema goes with the request: not where json_schema_mode is off, nor on
        a Claude without native structured outputs while it thinks (litellm would force a
        tool, which thinking forbids): the JSON is then asked for in the prompt, validated."""
        if self.structured == "prompt":
            return False
        return not (self.family == "claude" and self.thinks and not claude_native_schema(self.spec))

    @property
    def thinks(self) -> bool:
        return bool((self.thinking.kwargs.get("thinking") or {}).get("budget_tokens"))

    @property
    def omits_temperature(self) -> bool:
        """The family takes only the provider's default temperature under this plan."""
        return temperature_rule(self.rules, self.thinking) == "default_only"

    def cache_facts(self) -> dict[str, Any]:
        # what is sent, not what was configured: Qwen3's default-off switch counts too
        plan = self.thinking.record()
        return {"thinking": plan} if plan else {}

    def schema_mode(self, learned: dict[str, Any] | None = None) -> str:
        """The run record's words for how a schema is sent (`learned`: what an `auto`
        endpoint took, `models.litellm.dialects.DialectMemory.known`)."""
        if self.structured == "prompt":
            return f"prompted ({DIALECTS['prompt']})"
        if self.structured != "json_schema":
            return describe(self.structured, learned)
        if not self.schema_sent:
            return "prompted (Claude's forced tool use is incompatible with thinking)"
        if self.family == "claude":
            if claude_native_schema(self.spec):
                return "output_format json_schema (native structured outputs)"
            return "forced tool use (json_tool_call)"
        return self.rules.structured

    def sampling(self) -> dict[str, Any]:
        """What the run record says of sampling: the family, and what is left to the provider."""
        found: dict[str, Any] = {"family": self.rules.title}
        if self.omits_temperature:
            found["temperature"] = PROVIDER_DEFAULT
        elif self.rules.temperature == "default_recommended":
            found["temperature"] = f"{PROVIDER_DEFAULT} unless the config sets one"
        if self.rules.refused_params:
            found["never_sent"] = list(self.rules.refused_params)
        if self.rules.single_turn_reask:
            found["reask"] = f"one user turn ({self.rules.multi_turn})"
        return found

    def facts(self, learned: dict[str, Any] | None = None) -> dict[str, Any]:
        """The run record's facts (never the key itself); `learned` as for `schema_mode`."""
        routing = {}
        if isinstance(self.api_base, list):
            routing["routing"] = (
                f"litellm Router over {len(self.api_base)} endpoints: simple-shuffle, failover "
                f"to another endpoint within an attempt, a failed endpoint cooled down "
                f"{COOLDOWN_SECONDS:g} s; concurrency and rpm per endpoint"
            )
        return {
            "api_base": self.api_base,
            **routing,
            "api_key_env": self.api_key_env,
            "params": self.params,
            "thinking": self.thinking.record(),
            "sampling": self.sampling(),
            "structured_output": self.schema_mode(learned),
            "transport": self.transport(),
            "litellm_version": _litellm_version(),
        }


def configured_key(spec: ModelSpec, options: ModelOptions) -> str | None:
    """The key `api_key_env` names (None when it names none); a named but unset (or empty)
    variable is a MissingCredentialsError. Text and embedding models read their key the same
    way, when the backend is built: on the first call that must be sent."""
    if options.api_key_env is None:
        return None
    key = os.environ.get(options.api_key_env)
    if not key:
        raise MissingCredentialsError(spec, [options.api_key_env])
    return key


def settings(spec: ModelSpec, options: ModelOptions, *, read_key: bool = True) -> LiteLLMSettings:
    """The settings of one `litellm:` model; a bad thinking option is a ConfigError here,
    before any call. `read_key`: read the key `api_key_env` names (the backend's build, when a
    call must be sent); the plan never reads it, so a fully cached re-run needs no key."""
    params: dict[str, Any] = copy.deepcopy(options.params)
    json_mode = bool(params.pop("json_schema_mode", True))
    structured = options.structured_output or (
        "prompt" if not json_mode else "auto" if options.api_base else "json_schema"
    )
    rules = family_of(spec, options.api_base)
    try:
        thinking = plan_thinking(spec, options.thinking, options.api_base)
        check_params(spec, rules, thinking, params)
    except (ThinkingError, SamplingError) as exc:
        raise ConfigError(str(exc)) from None
    key = configured_key(spec, options) if read_key else None
    return LiteLLMSettings(
        route=_route(spec, options, params, rules.key),
        api_base=options.api_base,
        api_key_env=options.api_key_env,
        timeout=options.timeout,
        params=params,
        structured=structured,
        family=rules.key,
        thinking=thinking,
        rules=rules,
        spec=spec,
        api_key=key,
    )


def plan(spec: ModelSpec, options: ModelOptions) -> BackendPlan:
    """The lazy backend's plan (registry entry point): no key is read."""
    found = settings(spec, options, read_key=False)
    return BackendPlan(
        capabilities=found.capabilities,
        default_concurrency=DEFAULT_CONCURRENCY,
        cache_facts=found.cache_facts(),
        facts=found.facts(),
        image_limit=image_limit_for(spec.model_id, found.params),
        thinking_reserve=found.thinking.reserve,
    )


def _route(
    spec: ModelSpec, options: ModelOptions, params: dict[str, Any], family: str
) -> WireRoute | str:
    """The model's direct route under its `transport`, or why it goes through litellm; a
    `direct` the model cannot take is a ConfigError (the config's validators say so first)."""
    if options.transport == "litellm":
        return "transport: litellm in the config"
    route = direct_route(spec.model_id, options.api_base, params, family)
    if options.transport == "direct" and isinstance(route, str):
        raise ConfigError(f"{spec}: transport direct cannot be honoured: {route}")
    return route


@functools.cache
def _litellm_version() -> str:
    """The installed litellm's version (read once: importlib.metadata scans the site-packages,
    ~5 ms a call, and each model's settings record it)."""
    from importlib.metadata import version

    return version("litellm")


__all__ = [
    "COOLDOWN_SECONDS",
    "DEFAULT_CONCURRENCY",
    "SELF_HOSTED",
    "LiteLLMSettings",
    "plan",
    "settings",
]
