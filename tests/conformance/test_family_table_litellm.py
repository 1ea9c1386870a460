"""The family table (titjudge.models.litellm.families) is worked out without importing litellm;
where litellm knows the same facts, the two must agree, so an upgrade of litellm that changes
them fails here, naming the behaviour (`relies_on`)."""

from __future__ import annotations

import pytest
from doubles.relies import relies_on

from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.families import OPENAI_REASONING, claude_native_schema
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.thinking import plan_thinking
from titjudge.records.spec import parse_model_spec

litellm = litellm_module()


@pytest.mark.parametrize("model", ["gpt-5", "gpt-5-mini", "o4-mini", "o3"])
def test_litellm_sends_none_of_the_params_openai_reasoning_models_refuse(model):
    supported = litellm.get_supported_openai_params(model=model, custom_llm_provider="openai")
    for name in ("top_p", "presence_penalty", "frequency_penalty", "logprobs"):
        assert name in OPENAI_REASONING.refused_params
        relies_on(f"leaving {name} out of {model}'s supported params", name not in supported)
    relies_on(f"knowing {model} reasons", litellm.supports_reasoning(model=f"openai/{model}"))


@pytest.mark.parametrize(
    "model",
    ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5", "claude-sonnet-4-6"],
)
def test_claude_native_structured_outputs_match_litellms_map(model):
    info = litellm.get_model_info(model=model, custom_llm_provider="anthropic")
    ours = claude_native_schema(parse_model_spec(f"litellm:anthropic/{model}"))
    relies_on(
        f"flagging {model} supports_native_structured_output as titjudge's table does",
        bool(info.get("supports_native_structured_output")) == ours,
        info.get("supports_native_structured_output"),
    )


@pytest.mark.parametrize(
    ("model", "thinking", "max_output"),
    [
        ("openai/gpt-5", None, 128_000),
        ("gemini/gemini-3-flash-preview", None, 65_536),
        ("anthropic/claude-sonnet-4-5", "high", 64_000),
    ],
)
def test_the_cap_sent_with_the_default_allowance_fits_the_models_output_limit(
    model, thinking, max_output
):
    """A judge's 1,024 answer tokens plus the family's thinking allowance stay within the
    model's output limit as litellm's map records it."""
    spec = parse_model_spec(f"litellm:{model}")
    options = ModelOptions(thinking=thinking)
    plan = plan_thinking(spec, options.thinking)
    info = litellm.get_model_info(model=model)
    relies_on(f"recording {model}'s max_output_tokens", info.get("max_output_tokens") == max_output)
    assert 1024 + plan.reserve <= max_output
