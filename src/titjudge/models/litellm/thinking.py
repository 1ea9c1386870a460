"""Thinking (reasoning) of a `litellm:` model, mapped to its family's own switch.

`max_tokens` is always the *answer's* budget. Where a family counts thinking against the
output cap (`Family.thinking_shares_cap`), the cap sent is the answer's budget plus the
thinking budget, or the family's documented default allowance when the config sets none, so
thinking never starves the answer. What each family is sent (sources in `families`):

| family | `thinking` maps to | output cap sent |
|---|---|---|
| OpenAI reasoning | `reasoning_effort` (unset: the provider's default effort) | max_completion_tokens = max_tokens + budget (default 25,000) |
| Gemini 3 | `reasoning_effort`, which litellm sends as `thinkingConfig.thinkingLevel` (unset: high) | maxOutputTokens = max_tokens + budget (default 32,768) |
| Gemini 2.5 | `thinkingConfig.thinkingBudget` (via litellm's `thinking`); must be set | maxOutputTokens = max_tokens + budget |
| Claude | `thinking: {type: enabled, budget_tokens}` (unset: off) | max_tokens = max_tokens + budget_tokens |
| Qwen3 on vLLM | `chat_template_kwargs.enable_thinking` (default off) | max_tokens + budget |
"""

from __future__ import annotations

from typing import Any

from titjudge.models.core.thinking import (
    ThinkingError,
    ThinkingOptions,
    ThinkingPlan,
    no_thinking_setting,
    qwen3_switch,
)
from titjudge.models.litellm.families import (
    CLAUDE_BUDGETS,
    CLAUDE_MIN_BUDGET,
    Family,
    claude_thinks,
    family_of,
    gemini3_levels,
    openai_efforts,
)
from titjudge.records.spec import ModelSpec

#: the Gemini 2.5 budget a refusal's fix names (within the model's range): the shipped configs'
GEMINI25_BUDGET = 1024
#: efforts and levels from the least thinking to the most
_ORDER = ("none", "minimal", "low", "medium", "high")


def _nearest(asked: str, values: tuple[str, ...]) -> str:
    """The value of `values` closest to `asked` that thinks at least as much (else the most)."""
    rank = _ORDER.index(asked) if asked in _ORDER else 0
    above = [v for v in values if v in _ORDER and _ORDER.index(v) >= rank]
    return above[0] if above else values[-1]


def _gemini25_range(model: str) -> tuple[int, int, bool]:
    """(lowest budget, highest budget, can it be off) for Gemini 2.5 models (Gemini thinking
    docs; googleapis/python-genai#811: 2.5 Pro rejects 0 with "This model only works in
    thinking mode")."""
    name = model.lower()
    if "gemini-2.5-pro" in name:
        return 128, 32_768, False
    if "gemini-2.5-flash-lite" in name:
        return 512, 24_576, True
    return 1, 24_576, True


def plan_thinking(
    spec: ModelSpec, thinking: ThinkingOptions | None, api_base: Any = None
) -> ThinkingPlan:
    """The request additions for `thinking` on `spec`; ThinkingError when the model refuses it."""
    family = family_of(spec, api_base)
    planner = {
        "openai_reasoning": _openai_reasoning,
        "gemini3": _gemini3,
        "gemini": _gemini25,
        "claude": _claude,
        "qwen3_server": _qwen3_server,
    }.get(family.key)
    if planner is not None:
        return planner(spec, family, thinking)
    return no_thinking_setting(
        spec,
        thinking,
        "titjudge sets thinking for OpenAI reasoning models (o-series, gpt-5), Gemini 2.5 and 3, "
        "Claude and Qwen3",
        ", or pass the provider's own parameter under 'params'",
    )


def _openai_reasoning(
    spec: ModelSpec, family: Family, thinking: ThinkingOptions | None
) -> ThinkingPlan:
    efforts = openai_efforts(spec)
    off = None  # `minimal` still reasons (and bills for it): 'off' only where `none` exists
    if "none" in efforts and thinking is not None:
        off = ThinkingPlan(kwargs={"reasoning_effort": "none"}, reserve=thinking.budget or 0)
    return _named(spec, family, thinking, efforts, "reasoning_effort", "reasoning", off)


def _gemini3(spec: ModelSpec, family: Family, thinking: ThinkingOptions | None) -> ThinkingPlan:
    # Gemini 3 takes a level, not a budget (thinkingBudget beside thinkingLevel is a 400): a
    # budget only reserves room for the thoughts. It always thinks, and Flash's `minimal` does
    # not guarantee no thinking: 'off' is refused
    levels = gemini3_levels(spec)
    return _named(
        spec, family, thinking, levels, "thinkingLevel", "thinking (Gemini 3 always thinks)"
    )


def _named(
    spec: ModelSpec,
    family: Family,
    thinking: ThinkingOptions | None,
    values: tuple[str, ...],
    setting: str,
    stopping: str,
    off: ThinkingPlan | None = None,
) -> ThinkingPlan:
    """A family set by a named level (sent as litellm's `reasoning_effort`): unset is the
    provider's default, with room for `family.default_allowance` thinking tokens (or the
    configured budget); 'off' is `off` where the model can stop, else refused, never replaced
    by a level that still thinks."""
    reserve = family.default_allowance
    if thinking is not None and thinking.budget is not None:
        reserve = thinking.budget
    if thinking is None or (thinking.enabled and thinking.effort is None):
        return ThinkingPlan(reserve=reserve)  # the provider's default
    if not thinking.enabled:
        if off is not None:
            return off
        raise ThinkingError(
            f"{spec} cannot stop {stopping}; set thinking: {' or '.join(values)} (the least is "
            f"{values[0]!r}), or leave it unset",
            fix=values[0],
        )
    if thinking.effort not in values:
        raise ThinkingError(
            f"{spec} takes thinking: {', '.join(values)} ({setting}); not {thinking.effort!r}",
            fix=_nearest(str(thinking.effort), values),
        )
    return ThinkingPlan(kwargs={"reasoning_effort": thinking.effort}, reserve=reserve)


def _gemini25(spec: ModelSpec, family: Family, thinking: ThinkingOptions | None) -> ThinkingPlan:
    low, high, can_stop = _gemini25_range(spec.model_id)
    budget = str(min(max(GEMINI25_BUDGET, low), high))  # the budget a fix names
    if thinking is None:
        raise ThinkingError(
            f"{spec} thinks by default and its thinking counts against max_tokens; set "
            f"thinking: {{budget: N}} ({low}-{high} tokens, added to max_tokens)"
            + (" or thinking: off" if can_stop else ""),
            fix=budget,
        )
    if thinking.effort:
        raise ThinkingError(
            f"{spec}: Gemini 2.5 takes a thinking budget in tokens, not an effort; set "
            f"thinking: {{budget: N}} ({low}-{high})",
            fix=budget,
        )
    if not thinking.enabled or thinking.budget == 0:
        if not can_stop:
            raise ThinkingError(
                f"{spec} only works in thinking mode (a budget of 0 is rejected); set "
                f"thinking: {{budget: N}} with N from {low} to {high}",
                fix=budget,
            )
        return ThinkingPlan(kwargs={"thinking": {"type": "enabled", "budget_tokens": 0}})
    if thinking.budget is None:
        raise ThinkingError(
            f"{spec}: say how much it may think: thinking: {{budget: N}} ({low}-{high} tokens)",
            fix=budget,
        )
    if not low <= thinking.budget <= high:
        raise ThinkingError(
            f"{spec}: thinking budget {thinking.budget} is outside the model's range {low}-{high}",
            fix=str(min(max(thinking.budget, low), high)),
        )
    return ThinkingPlan(
        kwargs={"thinking": {"type": "enabled", "budget_tokens": thinking.budget}},
        reserve=thinking.budget,
    )


def _claude(spec: ModelSpec, family: Family, thinking: ThinkingOptions | None) -> ThinkingPlan:
    if thinking is None or not thinking.enabled:
        return ThinkingPlan()  # Claude does not think unless asked
    if not claude_thinks(spec):
        raise ThinkingError(
            f"{spec} has no extended thinking (Claude 3.7 Sonnet and Claude 4 or later have); "
            "remove 'thinking' (or set it off)",
            fix="off",
        )
    if thinking.effort == "minimal":
        raise ThinkingError(f"{spec} takes thinking: low, medium or high, or a budget", fix="low")
    budget = thinking.budget or CLAUDE_BUDGETS[thinking.effort or "medium"]
    if budget < CLAUDE_MIN_BUDGET:
        raise ThinkingError(
            f"{spec}: Claude's thinking budget is at least {CLAUDE_MIN_BUDGET} tokens; got {budget}",
            fix=str(CLAUDE_MIN_BUDGET),
        )
    # budget_tokens < max_tokens holds: the cap sent is the answer's max_tokens plus the budget
    return ThinkingPlan(
        kwargs={"thinking": {"type": "enabled", "budget_tokens": budget}}, reserve=budget
    )


def _qwen3_server(
    spec: ModelSpec, family: Family, thinking: ThinkingOptions | None
) -> ThinkingPlan:
    on, reserve = qwen3_switch(spec, thinking)
    return ThinkingPlan(body={"chat_template_kwargs": {"enable_thinking": on}}, reserve=reserve)


__all__ = ["plan_thinking"]
