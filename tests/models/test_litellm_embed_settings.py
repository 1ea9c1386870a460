"""What a served embedding model's config means: batch limits, refusals, preflight."""

from __future__ import annotations

import pytest

from titjudge.errors import ConfigError
from titjudge.judges.embedding import EmbeddingJudgeConfig
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.embed_settings import (
    GEMINI_MAX_BATCH,
    OPENAI_MAX_BATCH,
    SERVER_MAX_BATCH,
    embedding_settings,
    plan,
)
from titjudge.models.preflight import ModelUse, check_models
from titjudge.records.spec import parse_model_spec

PROVIDER_KEYS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "HOSTED_VLLM_API_KEY")


@pytest.fixture
def no_keys(monkeypatch):
    for name in PROVIDER_KEYS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("model", "api_base", "limit"),
    [
        ("litellm:openai/text-embedding-3-small", None, OPENAI_MAX_BATCH),
        ("litellm:text-embedding-3-large", None, OPENAI_MAX_BATCH),
        ("litellm:gemini/gemini-embedding-001", None, GEMINI_MAX_BATCH),
        ("litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B", "http://127.0.0.1:8000/v1", 32),
        ("litellm:openai/Qwen/Qwen3-Embedding-8B", "http://127.0.0.1:8080/v1", 32),
    ],
)
def test_texts_per_request_follow_the_provider(model, api_base, limit):
    found = plan(parse_model_spec(model), ModelOptions(api_base=api_base))
    assert found.max_batch == limit
    assert (OPENAI_MAX_BATCH, GEMINI_MAX_BATCH, SERVER_MAX_BATCH) == (2048, 100, 32)


def test_batch_size_replaces_the_default_cap():
    spec = parse_model_spec("litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B")
    assert embedding_settings(spec, ModelOptions(batch_size=256)).max_batch == 256


@pytest.mark.parametrize("model", ["litellm:openai/gpt-4o", "litellm:gpt-4o-mini"])
def test_a_chat_model_is_refused_when_the_config_is_loaded(model):
    with pytest.raises(ValueError, match="lists it as a chat model, which cannot embed"):
        EmbeddingJudgeConfig(name="tit_score", kind="embedding", model=model)


def test_a_chat_model_is_refused_before_any_call():
    with pytest.raises(ConfigError, match="lists it as a chat model, which cannot embed"):
        plan(parse_model_spec("litellm:gemini/gemini-2.5-pro"), ModelOptions())


def test_models_litellm_does_not_list_are_accepted():
    config = EmbeddingJudgeConfig(
        name="tit_score",
        kind="embedding",
        model="litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B",
        api_base="http://127.0.0.1:8000/v1",
    )
    assert config.model == "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B"


def test_thinking_is_refused_for_an_embedding_model():
    spec = parse_model_spec("litellm:openai/text-embedding-3-small")
    with pytest.raises(ConfigError, match="'thinking' applies to text models"):
        embedding_settings(spec, ModelOptions(thinking={"budget": 128}))


@pytest.mark.parametrize(
    ("model", "missing"),
    [
        ("litellm:openai/text-embedding-3-small", "OPENAI_API_KEY not set"),
        ("litellm:gemini/gemini-embedding-001", "GEMINI_API_KEY not set"),
    ],
)
def test_preflight_names_the_missing_key(no_keys, model, missing):
    uses = [ModelUse(model, ModelOptions(), "judge tit_score")]
    with pytest.raises(ConfigError) as raised:
        check_models(uses, "run.yaml")
    assert f"{missing} ({model}: judge tit_score)" in str(raised.value)


def test_preflight_needs_no_key_for_a_server_at_an_api_base(no_keys):
    options = ModelOptions(api_base="http://127.0.0.1:8000/v1")
    check_models(
        [ModelUse("litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B", options, "judge tit_score")],
        "run.yaml",
    )


def test_an_endpoint_list_is_refused_for_an_embedding_model():
    """Several endpoints (litellm's Router) serve text models; an embedding judge given a list
    is told so when the config is loaded, and the settings refuse it too, never a failed run."""
    urls = ["http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1"]
    model = "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B"
    with pytest.raises(ValueError, match="takes one api_base, not a list"):
        EmbeddingJudgeConfig(name="tit_score", kind="embedding", model=model, api_base=urls)
    with pytest.raises(ConfigError, match="one api_base, not a list"):
        embedding_settings(parse_model_spec(model), ModelOptions(api_base=urls))
