"""Thinking (reasoning) as a model option, mapped to each provider's own switch.

`max_tokens` is always the *answer's* budget (the paper's 512 tokens for a description).
Providers that count thinking against the output cap get the thinking budget added on top,
so thinking never eats the answer:

| model | `thinking` maps to | output cap sent |
|---|---|---|
| Gemini 2.5 (`gemini/`, `vertex_ai/`) | `generationConfig.thinkingConfig.thinkingBudget` (via litellm's `thinking`) | max_tokens + budget |
| OpenAI reasoning (o1/o3/o4, gpt-5) | `reasoning_effort`; `budget` reserves room for reasoning | max_tokens + budget |
| Qwen3 on an OpenAI-compatible server (vLLM) | `chat_template_kwargs.enable_thinking` in the request body | max_tokens + budget |
| Qwen3 with `hf:` | the chat template's `enable_thinking` argument | max_tokens + budget |

Provider facts (Gemini thinking docs; googleapis/python-genai#811): Gemini 2.5 Pro cannot
stop thinking (budget 128-32,768; 0 is rejected with "This model only works in thinking
mode"); 2.5 Flash takes 0-24,576, Flash-Lite 512-24,576 or 0. Thinking tokens are billed
as output and count against `maxOutputTokens`. Models that think by default and bill it
against the answer's cap (Gemini 2.5, OpenAI reasoning models) must say how much: an unset
`thinking` there is a config error, not a silent default. Qwen3 defaults to thinking off,
sent explicitly, on both backends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from titjudge.models.core.spec import ModelSpec

Effort = Literal["minimal", "low", "medium", "high"]
_EFFORTS = ("minimal", "low", "medium", "high")


class ThinkingOptions(BaseModel):
    """`thinking: {budget: 1024}`, `{effort: low}`, `{enabled: false}`; shorthand `thinking: off`,
    `thinking: 1024`, `thinking: low`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="false turns thinking off where the model allows it")
    budget: int | None = Field(
        None, ge=0, le=131_072, description="thinking tokens, on top of max_tokens (the answer's)"
    )
    effort: Effort | None = Field(
        None, description="OpenAI reasoning models: minimal, low, medium or high"
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, bool):
            return {"enabled": data}
        if isinstance(data, int):
            return {"budget": data} if data > 0 else {"enabled": False}
        if isinstance(data, str):
            word = data.strip().lower()
            if word in ("off", "false", "no", "none", "disabled"):
                return {"enabled": False}
            if word in ("on", "true", "yes"):
                return {"enabled": True}
            if word in _EFFORTS:
                return {"effort": word}
            raise ValueError(
                f"thinking {data!r}: expected off, on, a token budget, one of {', '.join(_EFFORTS)}, "
                "or a mapping {enabled, budget, effort}"
            )
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ThinkingOptions:
        if not self.enabled and (self.budget or self.effort):
            raise ValueError("thinking is off, so it takes no budget or effort")
        return self


@dataclass(frozen=True)
class ThinkingPlan:
    """What a backend adds to each request for the configured thinking."""

    #: extra completion kwargs (litellm `thinking`, `reasoning_effort`)
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: merged into the request body (`extra_body`) for OpenAI-compatible servers
    body: dict[str, Any] = field(default_factory=dict)
    #: tokens added to the answer's max_tokens in the output cap sent
    reserve: int = 0
    #: hf: chat-template argument; None where the template takes none
    enable_thinking: bool | None = None

    def record(self) -> dict[str, Any]:
        return {
            k: v
            for k, v in (
                ("kwargs", self.kwargs),
                ("body", self.body),
                ("reserve", self.reserve),
                ("enable_thinking", self.enable_thinking),
            )
            if v not in ({}, 0, None)
        }


class ThinkingError(ValueError):
    """The configured thinking is not something this model accepts."""


def _gemini_range(model: str) -> tuple[int, int, bool] | None:
    """(lowest budget, highest budget, can it be off) for Gemini 2.5 models; None otherwise."""
    name = model.lower()
    if "gemini-2.5-pro" in name:
        return 128, 32_768, False
    if "gemini-2.5-flash-lite" in name:
        return 512, 24_576, True
    if "gemini-2.5-flash" in name:
        return 1, 24_576, True
    return None


def model_family(spec: ModelSpec, api_base: Any = None) -> str:
    """'gemini', 'openai_reasoning', 'openai', 'qwen3_server', 'qwen3_hf' or 'other'."""
    model = spec.model_id.lower()
    provider, _, name = model.partition("/")
    if spec.backend == "hf":
        return "qwen3_hf" if "qwen3" in model and "embedding" not in model else "other"
    if spec.backend != "litellm":
        return "other"
    if provider in ("gemini", "vertex_ai", "vertex_ai_beta") and "gemini" in name:
        return "gemini"
    # OpenAI's own models, also behind a proxy or gateway named by api_base
    if provider in ("openai", "azure") and re.match(r"^(o\d|gpt-5)", name):
        return "openai_reasoning"
    if provider in ("openai", "azure") and re.match(r"^(gpt-|chatgpt-)", name):
        return "openai"
    if "qwen3" in name and "embedding" not in name and (provider == "hosted_vllm" or api_base):
        return "qwen3_server"
    return "other"


def plan_thinking(
    spec: ModelSpec, thinking: ThinkingOptions | None, api_base: Any = None
) -> ThinkingPlan:
    """The request additions for `thinking` on `spec`; ThinkingError when the model refuses it."""
    family = model_family(spec, api_base)
    if family == "gemini":
        return _gemini(spec, thinking)
    if family == "openai_reasoning":
        return _openai_reasoning(spec, thinking)
    if family in ("qwen3_server", "qwen3_hf"):
        on = bool(thinking and thinking.enabled)
        if thinking is not None and thinking.effort:
            raise ThinkingError(
                f"{spec}: Qwen3's thinking is a switch with no effort levels; use thinking: on/off "
                "(and a budget to reserve room for it)"
            )
        reserve = (thinking.budget or 0) if (thinking and on) else 0
        if family == "qwen3_hf":
            return ThinkingPlan(reserve=reserve, enable_thinking=on)
        return ThinkingPlan(body={"chat_template_kwargs": {"enable_thinking": on}}, reserve=reserve)
    if thinking is None:
        return ThinkingPlan()
    raise ThinkingError(
        f"{spec}: titjudge sets thinking for Gemini 2.5, OpenAI reasoning models (o-series, "
        "gpt-5) and Qwen3; this model has no thinking setting it knows. Remove 'thinking', or "
        "pass the provider's own parameter under 'params'"
    )


def _gemini(spec: ModelSpec, thinking: ThinkingOptions | None) -> ThinkingPlan:
    limits = _gemini_range(spec.model_id)
    if limits is None:  # Gemini 2.0 and earlier do not think; Gemini 3 takes thinking levels
        if thinking is None:
            return ThinkingPlan()
        raise ThinkingError(
            f"{spec}: titjudge sets a thinking budget for Gemini 2.5 models only; pass Gemini's own "
            "setting under 'params' for this one"
        )
    low, high, can_stop = limits
    if thinking is None:
        raise ThinkingError(
            f"{spec} thinks by default and its thinking counts against max_tokens; set "
            f"thinking: {{budget: N}} ({low}-{high} tokens, added to max_tokens)"
            + (" or thinking: off" if can_stop else "")
        )
    if thinking.effort:
        raise ThinkingError(
            f"{spec}: Gemini 2.5 takes a thinking budget in tokens, not an effort; set "
            f"thinking: {{budget: N}} ({low}-{high})"
        )
    if not thinking.enabled or thinking.budget == 0:
        if not can_stop:
            raise ThinkingError(
                f"{spec} only works in thinking mode (a budget of 0 is rejected); set "
                f"thinking: {{budget: N}} with N from {low} to {high}"
            )
        return ThinkingPlan(kwargs={"thinking": {"type": "enabled", "budget_tokens": 0}})
    if thinking.budget is None:
        raise ThinkingError(
            f"{spec}: say how much it may think: thinking: {{budget: N}} ({low}-{high} tokens)"
        )
    if not low <= thinking.budget <= high:
        raise ThinkingError(
            f"{spec}: thinking budget {thinking.budget} is outside the model's range {low}-{high}"
        )
    return ThinkingPlan(
        kwargs={"thinking": {"type": "enabled", "budget_tokens": thinking.budget}},
        reserve=thinking.budget,
    )


def _openai_reasoning(spec: ModelSpec, thinking: ThinkingOptions | None) -> ThinkingPlan:
    name = spec.model_id.lower().partition("/")[2]
    if thinking is None:
        raise ThinkingError(
            f"{spec} reasons by default and its reasoning counts against max_tokens; set "
            "thinking: {effort: low|medium|high, budget: N} (budget: tokens reserved for reasoning)"
        )
    if not thinking.enabled:
        if name.startswith("gpt-5"):
            return ThinkingPlan(kwargs={"reasoning_effort": "minimal"})
        raise ThinkingError(f"{spec} cannot stop reasoning; set thinking: {{effort: low}}")
    if thinking.effort is None:
        raise ThinkingError(
            f"{spec}: OpenAI reasoning models take an effort: thinking: {{effort: low|medium|high}}"
        )
    if thinking.effort == "minimal" and not name.startswith("gpt-5"):
        raise ThinkingError(f"{spec}: effort 'minimal' exists for gpt-5 models only")
    return ThinkingPlan(kwargs={"reasoning_effort": thinking.effort}, reserve=thinking.budget or 0)


__all__ = [
    "ThinkingError",
    "ThinkingOptions",
    "ThinkingPlan",
    "model_family",
    "plan_thinking",
]
