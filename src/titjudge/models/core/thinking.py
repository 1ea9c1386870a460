"""Thinking (reasoning) as a model option: the config's shape, and the plan a backend sends.

`max_tokens` is always the *answer's* budget (the paper's 512 tokens for a description).
Providers that count thinking against the output cap get the thinking budget added on top,
so thinking never eats the answer. `litellm:` models are planned by their family's rules
(`models.litellm.thinking`, from the table in `models.litellm.families`); here are the ones a
local model takes: Qwen3 with `hf:` gets the chat template's `enable_thinking` argument
(default off, sent explicitly), with any budget added to max_tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from titjudge.errors import SettingRefused
from titjudge.records.spec import ModelSpec

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
        None,
        description="OpenAI reasoning_effort, Gemini 3 thinkingLevel, Claude's budget: "
        "minimal, low, medium or high (what the model documents)",
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


class ThinkingError(SettingRefused):
    """The configured thinking is not something this model accepts; `fix`: a thinking setting
    it does take (as `--set ...thinking=` writes it), where one is the obvious choice."""

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message, "thinking", fix)


def qwen3_switch(spec: ModelSpec, thinking: ThinkingOptions | None) -> tuple[bool, int]:
    """Qwen3's thinking, wherever the model runs (a local hf: model's chat template, or a
    server's `chat_template_kwargs`): a switch, off unless set on, with no effort levels; the
    budget only reserves room for the thinking on top of max_tokens. Returns (on, reserve)."""
    on = bool(thinking and thinking.enabled)
    if thinking is not None and thinking.effort:
        raise ThinkingError(
            f"{spec}: Qwen3's thinking is a switch with no effort levels; use thinking: on/off "
            "(and a budget to reserve room for it)",
            fix="on",
        )
    return on, (thinking.budget or 0) if (thinking and on) else 0


def plan_thinking(
    spec: ModelSpec, thinking: ThinkingOptions | None, api_base: Any = None
) -> ThinkingPlan:
    """The request additions for `thinking` on a local (`hf:`) or other non-litellm model;
    ThinkingError when the model refuses it. `litellm:` models: `models.litellm.thinking`."""
    model = spec.model_id.lower()
    if spec.backend == "hf" and "qwen3" in model and "embedding" not in model:
        on, reserve = qwen3_switch(spec, thinking)
        return ThinkingPlan(reserve=reserve, enable_thinking=on)
    return no_thinking_setting(
        spec,
        thinking,
        "titjudge sets thinking for Qwen3 on hf: and for litellm: models of known families",
    )


def no_thinking_setting(
    spec: ModelSpec, thinking: ThinkingOptions | None, known: str, instead: str = ""
) -> ThinkingPlan:
    """The plan of a model with no thinking setting titjudge knows: nothing to add when
    thinking is off or unset (what such a model does anyway); asked for, a ThinkingError that
    says which models titjudge does set it for (`known`) and what else to do (`instead`)."""
    if thinking is None or not thinking.enabled:
        return ThinkingPlan()
    raise ThinkingError(
        f"{spec}: {known}; this model has no thinking setting it knows. Remove 'thinking' (or "
        f"set it off){instead}",
        fix="off",
    )


__all__ = [
    "ThinkingError",
    "ThinkingOptions",
    "ThinkingPlan",
    "no_thinking_setting",
    "plan_thinking",
    "qwen3_switch",
]
