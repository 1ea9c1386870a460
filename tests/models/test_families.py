"""The family table and what it decides: which family a model is, the temperature a role
sends, what enters the cache key, what the backend builds (issue 24). Provider facts are cited
in titjudge.models.litellm.families."""

from __future__ import annotations

import logging

import pytest

from titjudge.models.calls.keys import generation_key
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.models.core.thinking import ThinkingOptions
from titjudge.models.litellm.families import claude_native_schema, family_of
from titjudge.models.litellm.sampling import SamplingError, role_temperature
from titjudge.models.litellm.settings import settings
from titjudge.records.spec import parse_model_spec


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("openai/gpt-5", "openai_reasoning"),
        ("openai/gpt-5.1", "openai_reasoning"),
        ("azure/o4-mini", "openai_reasoning"),
        ("openai/gpt-5-chat-latest", "openai"),  # a chat model: it takes temperature
        ("openai/gpt-4o", "openai"),
        ("gemini/gemini-3-pro-preview", "gemini3"),
        ("vertex_ai/gemini-3-flash-preview", "gemini3"),
        ("gemini/gemini-2.5-pro", "gemini"),
        ("anthropic/claude-sonnet-4-5-20250929", "claude"),
        ("hosted_vllm/Qwen/Qwen3-8B", "qwen3_server"),
        ("openrouter/meta-llama/llama-3-70b", "other"),
    ],
)
def test_each_model_has_its_family(model, family):
    assert family_of(parse_model_spec(f"litellm:{model}")).key == family


def test_claude_native_structured_outputs_from_4_5():
    native = [
        "anthropic/claude-sonnet-4-5-20250929",
        "anthropic/claude-haiku-4-5",
        "anthropic/claude-opus-4-6",
    ]
    forced = ["anthropic/claude-opus-4-20250514", "anthropic/claude-3-7-sonnet-20250219"]
    assert all(claude_native_schema(parse_model_spec(f"litellm:{m}")) for m in native)
    assert not any(claude_native_schema(parse_model_spec(f"litellm:{m}")) for m in forced)


def _temp(model, temperature=0.0, explicit=False, **options):
    return role_temperature(model, ModelOptions(**options), temperature, explicit)


def test_a_role_temperature_follows_its_family():
    assert _temp("litellm:openai/gpt-5") is None  # unset: the provider's default
    assert _temp("litellm:openai/gpt-5", 1.0, True) == 1.0
    with pytest.raises(SamplingError, match="temperature 0.5 is refused"):
        _temp("litellm:openai/o3", 0.5, True)
    # gpt-5.1 at reasoning_effort none takes temperature again
    assert _temp("litellm:openai/gpt-5.1", 0.2, True, thinking="off") == 0.2
    assert _temp("litellm:openai/gpt-4o") == 0.0
    claude = "litellm:anthropic/claude-sonnet-4-5"
    assert _temp(claude, 0.7, True) == 0.7
    assert _temp(claude, thinking="low") is None
    with pytest.raises(SamplingError, match="while it thinks"):
        _temp(claude, 0.0, True, thinking="low")
    with pytest.raises(SamplingError, match="from 0 to 1"):
        _temp(claude, 1.2, True)
    with pytest.raises(SamplingError, match="null"):
        _temp("hf:Qwen/Qwen3-8B", None, True)


def test_gemini3_keeps_the_default_and_warns_about_a_set_one(caplog):
    caplog.set_level(logging.WARNING)
    assert _temp("litellm:gemini/gemini-3-pro-preview") is None
    assert caplog.records == []
    assert _temp("litellm:gemini/gemini-3-pro-preview", 0.2, True) == 0.2
    (record,) = caplog.records
    assert "temperature 0.2 is sent" in record.getMessage()
    assert "gemini-api/docs/gemini-3" in record.getMessage()


def test_the_provider_default_has_its_own_cache_key():
    spec = parse_model_spec("litellm:openai/gpt-5")
    keys = {
        generation_key(spec, GenerateRequest(prompt="p", temperature=t)) for t in (None, 0.0, 1.0)
    }
    assert len(keys) == 3


def _backend(model, **options):
    from titjudge.models.litellm.backend import LiteLLMBackend

    return LiteLLMBackend(
        parse_model_spec(f"litellm:{model}"), ModelOptions(**options), offline=True
    )


def test_the_backend_sends_no_temperature_for_the_provider_default_and_folds_the_gemini3_reask():
    gemini = _backend("gemini/gemini-3-pro-preview", thinking="low")
    reask = GenerateRequest(
        prompt="again", temperature=None, history=(("user", "first"), ("assistant", "bad"))
    )
    sent = gemini.request_kwargs(reask)
    assert "temperature" not in sent
    assert sent["reasoning_effort"] == "low" and sent["max_tokens"] == 512 + 32_768
    (turn,) = sent["messages"]
    assert turn["role"] == "user" and "bad" in turn["content"] and "again" in turn["content"]
    # other families keep the earlier exchange as turns
    gpt = _backend("openai/gpt-4o").request_kwargs(reask)
    assert [m["role"] for m in gpt["messages"]] == ["user", "assistant", "user"]


def test_a_thinking_claude_without_native_schemas_is_asked_in_the_prompt():
    old = settings(
        parse_model_spec("litellm:anthropic/claude-3-7-sonnet-20250219"),
        ModelOptions(thinking=ThinkingOptions(effort="low")),
        read_key=False,
    )
    assert not old.capabilities.json_schema
    assert old.schema_mode().startswith("prompted")
    assert old.facts()["sampling"]["temperature"] == "provider default"
    new = settings(
        parse_model_spec("litellm:anthropic/claude-sonnet-4-5"),
        ModelOptions(thinking=ThinkingOptions(effort="low")),
        read_key=False,
    )
    assert new.capabilities.json_schema and "output_format" in new.schema_mode()


def test_a_judge_on_the_describers_model_follows_that_models_family():
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.errors import ConfigError

    raw = {
        "name": "x",
        "describer": {"model": "litellm:openai/gpt-5"},
        "judges": [{"name": "lmm", "kind": "lmm"}],
    }
    config = validate_config(raw, RunConfig, "cfg.yaml")
    assert config.describer.temperature is None and config.judges[0].temperature is None
    raw["judges"][0]["temperature"] = 0.5
    with pytest.raises(ConfigError, match="judge 'lmm': .*temperature 0.5 is refused"):
        validate_config(raw, RunConfig, "cfg.yaml")
