"""Model families as data: each family's documented rules, in one table.

Worked out without importing litellm (a cached re-run never loads it): the family is told by
the model spec alone. What litellm already enforces or maps is noted beside each row (litellm
1.110: `OpenAIGPT5Config` / `OpenAIOSeriesConfig` refuse a temperature other than 1 before any
request, `reasoning_effort` becomes Gemini 3's `thinkingLevel`, Anthropic's `response_format`
becomes a native `output_format` on the models litellm's map flags
`supports_native_structured_output`); the table adds what it lacks, citing the provider.

Sources (one per row, quoted where it matters):
- OpenAI reasoning models (o1, o3, o4-mini, gpt-5*): https://platform.openai.com/docs/guides/reasoning
  ("temperature, top_p and n are fixed at 1, while presence_penalty and frequency_penalty are
  fixed at 0"; `max_completion_tokens` counts "both reasoning and visible completion tokens";
  "OpenAI recommends reserving at least 25,000 tokens for reasoning and outputs");
  `reasoning_effort` values per model: openai-python `types/shared/reasoning.py` docstring
  (o-series low/medium/high; gpt-5 adds minimal; gpt-5.1 none/low/medium/high, default none).
- Gemini 3: https://ai.google.dev/gemini-api/docs/gemini-3 (`thinkingLevel` low/high on Pro,
  also minimal/medium on Flash, default high; "we strongly recommend keeping the temperature
  parameter at its default value of 1.0"; thought signatures on multi-turn requests) and
  https://ai.google.dev/gemini-api/docs/thinking ("You cannot disable thinking for Gemini 3
  Pro"); thoughts count against `maxOutputTokens` (googleapis/python-genai#2062).
- Gemini 2.5: https://ai.google.dev/gemini-api/docs/thinking (budgets; see `litellm.thinking`).
- Claude: https://docs.claude.com/en/docs/build-with-claude/extended-thinking ("budget_tokens
  must be set to a value less than max_tokens"; "The minimum budget is 1,024 tokens";
  "Thinking isn't compatible with temperature or top_k modifications as well as forced tool
  use"; top_p "between 1 and 0.95"), structured outputs:
  https://docs.claude.com/en/docs/build-with-claude/structured-outputs (Sonnet 4.5, Opus 4.1,
  Opus 4.5, Haiku 4.5 and later), temperature range 0-1:
  https://docs.claude.com/en/api/messages.
- Qwen3 on vLLM: https://docs.vllm.ai/en/latest/features/reasoning_outputs.html.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from titjudge.records.spec import ModelSpec

#: how a family takes temperature: any value; only the provider's default (1), always or while
#: thinking is on (a setting is refused); or the default recommended (a setting is warned about)
TemperatureRule = Literal["any", "default_only", "default_only_thinking", "default_recommended"]


@dataclass(frozen=True)
class Family:
    """One family's documented rules (see the module docstring for each source)."""

    key: str
    title: str
    #: sampling parameters the provider refuses (under `params`, a config error)
    refused_params: tuple[str, ...] = ()
    #: ... refused only while thinking is on
    refused_with_thinking: tuple[str, ...] = ()
    temperature: TemperatureRule = "any"
    #: the highest temperature the provider takes
    temperature_max: float = 2.0
    #: how thinking is set: not at all, an effort, a level, a token budget, or an on/off switch
    thinking: Literal["none", "effort", "level", "budget", "switch"] = "none"
    #: thinking tokens count against the output cap (then the cap sent is answer + allowance)
    thinking_shares_cap: bool = False
    #: the output cap's name on the wire
    cap_name: str = "max_tokens"
    #: tokens reserved for thinking on top of the answer's max_tokens when the config sets no
    #: budget (a model that thinks by default; `thinking: {budget: N}` overrides it)
    default_allowance: int = 0
    #: how a schema-validated reply is asked for
    structured: str = "json_schema"
    #: the JSON Schema subset the schema is translated into (models.litellm.schemas)
    schema_subset: Literal["gemini", "openai_strict", "json_schema"] = "json_schema"
    #: what a multi-turn request (the judge's re-ask) needs
    multi_turn: str = "history sent as is"
    #: the re-ask is folded into one user turn (no earlier model turn is sent back)
    single_turn_reask: bool = False
    #: where the rules come from
    docs: str = ""


OPENAI_REASONING = Family(
    key="openai_reasoning",
    title="OpenAI reasoning (gpt-5*, o1, o3, o4-mini)",
    refused_params=(
        "top_p",
        "presence_penalty",
        "frequency_penalty",
        "logprobs",
        "top_logprobs",
        "logit_bias",
    ),
    temperature="default_only",
    thinking="effort",
    thinking_shares_cap=True,
    cap_name="max_completion_tokens",
    default_allowance=25_000,
    structured="json_schema strict where the schema allows",
    schema_subset="openai_strict",
    docs="https://platform.openai.com/docs/guides/reasoning",
)
OPENAI = Family(
    key="openai",
    title="OpenAI chat (gpt-4o, gpt-4.1, gpt-5-chat)",
    structured="json_schema strict where the schema allows",
    schema_subset="openai_strict",
    docs="https://platform.openai.com/docs/api-reference/chat/create",
)
GEMINI3 = Family(
    key="gemini3",
    title="Gemini 3 (Pro, Flash)",
    temperature="default_recommended",
    thinking="level",
    thinking_shares_cap=True,
    cap_name="generationConfig.maxOutputTokens",
    # Google gives no default for Gemini 3's thinking at level high; 32,768 is the largest
    # budget the Gemini 2.5 line documents (2.5 Pro: 128-32,768)
    default_allowance=32_768,
    structured="responseJsonSchema (Gemini subset)",
    schema_subset="gemini",
    multi_turn="thought signatures expected on earlier model turns",
    single_turn_reask=True,
    docs="https://ai.google.dev/gemini-api/docs/gemini-3",
)
GEMINI25 = Family(
    key="gemini",
    title="Gemini 2.5 (Pro, Flash, Flash-Lite)",
    thinking="budget",
    thinking_shares_cap=True,
    cap_name="generationConfig.maxOutputTokens",
    structured="responseJsonSchema (Gemini subset)",
    schema_subset="gemini",
    docs="https://ai.google.dev/gemini-api/docs/thinking",
)
GEMINI_OLD = Family(
    key="gemini_plain",
    title="Gemini 2.0 and earlier",
    cap_name="generationConfig.maxOutputTokens",
    structured="responseJsonSchema (Gemini subset)",
    schema_subset="gemini",
    docs="https://ai.google.dev/gemini-api/docs/structured-output",
)
CLAUDE = Family(
    key="claude",
    title="Claude (anthropic/)",
    refused_with_thinking=("top_k",),
    temperature="default_only_thinking",
    temperature_max=1.0,
    thinking="budget",
    # budget_tokens counts within max_tokens: the cap sent is the answer's plus the budget
    thinking_shares_cap=True,
    structured="output_format json_schema (Claude 4.5 and later); else a forced tool, "
    "which thinking forbids (then the JSON is asked for in the prompt)",
    docs="https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
)
QWEN3_SERVER = Family(
    key="qwen3_server",
    title="Qwen3 on an OpenAI-compatible server (vLLM)",
    thinking="switch",
    docs="https://docs.vllm.ai/en/latest/features/reasoning_outputs.html",
)
OTHER = Family(key="other", title="any other litellm model")

FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (OPENAI_REASONING, OPENAI, GEMINI3, GEMINI25, GEMINI_OLD, CLAUDE, QWEN3_SERVER, OTHER)
}

#: Claude's thinking budget per effort: litellm's own map of `reasoning_effort` for Anthropic
#: (DEFAULT_REASONING_EFFORT_{LOW,MEDIUM,HIGH}_THINKING_BUDGET); 1,024 is Claude's minimum
CLAUDE_BUDGETS = {"low": 1024, "medium": 2048, "high": 4096}
CLAUDE_MIN_BUDGET = 1024


def _split(spec: ModelSpec) -> tuple[str, str]:
    provider, _, name = spec.model_id.lower().partition("/")
    return provider, name


def family_of(spec: ModelSpec, api_base: Any = None) -> Family:
    """The family of a `litellm:` model (OTHER when titjudge knows no rules for it)."""
    provider, name = _split(spec)
    if provider in ("gemini", "vertex_ai", "vertex_ai_beta") and "gemini" in name:
        if re.search(r"gemini-([3-9]|\d\d)", name):
            return GEMINI3
        if "gemini-2.5" in name:
            return GEMINI25
        return GEMINI_OLD
    # OpenAI's own models, also behind a proxy or gateway named by api_base; gpt-5-chat* is a
    # chat model (it takes temperature)
    if provider in ("openai", "azure") and re.match(r"^(o\d|gpt-5(?!-chat))", name):
        return OPENAI_REASONING
    if provider in ("openai", "azure") and re.match(r"^(gpt-|chatgpt-)", name):
        return OPENAI
    if provider == "anthropic" and name.startswith("claude"):
        return CLAUDE
    if "qwen3" in name and "embedding" not in name and (provider == "hosted_vllm" or api_base):
        return QWEN3_SERVER
    return OTHER


def openai_efforts(spec: ModelSpec) -> tuple[str, ...]:
    """`reasoning_effort` values the model takes (openai-python's reasoning docstring)."""
    _, name = _split(spec)
    if name.startswith("gpt-5-pro"):
        return ("high",)
    if re.match(r"gpt-5\.\d", name):  # gpt-5.1 and later: none is the default, no minimal
        return ("none", "low", "medium", "high")
    if name.startswith("gpt-5"):
        return ("minimal", "low", "medium", "high")
    return ("low", "medium", "high")


def gemini3_levels(spec: ModelSpec) -> tuple[str, ...]:
    """`thinkingLevel` values (Gemini 3 guide): Flash minimal-high, 3.1 Pro low-high, 3 Pro
    low or high."""
    _, name = _split(spec)
    if "flash" in name:
        return ("minimal", "low", "medium", "high")
    if re.search(r"gemini-3\.[1-9]", name):
        return ("low", "medium", "high")
    return ("low", "high")


def claude_thinks(spec: ModelSpec) -> bool:
    """Extended thinking: Claude 3.7 Sonnet and Claude 4 and later."""
    _, name = _split(spec)
    return "claude-3-7" in name or bool(re.search(r"claude-(opus|sonnet|haiku)-([4-9]|\d\d)", name))


def claude_native_schema(spec: ModelSpec) -> bool:
    """Native structured outputs (`output_format`), as litellm sends them: Claude 4.5 and later
    (litellm 1.110's map flags `supports_native_structured_output` on those; Anthropic's docs
    also list Opus 4.1, which litellm still asks with a forced tool)."""
    _, name = _split(spec)
    found = re.search(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d)(?!\d))?", name)
    if not found:
        return False
    return (int(found[2]), int(found[3] or 0)) >= (4, 5)


__all__ = [
    "CLAUDE_BUDGETS",
    "CLAUDE_MIN_BUDGET",
    "FAMILIES",
    "Family",
    "claude_native_schema",
    "claude_thinks",
    "family_of",
    "gemini3_levels",
    "openai_efforts",
]
