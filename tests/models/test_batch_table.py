"""A batch adapter is picked from one table per provider (as models are from
`models.registry`), built from the one site its model's online calls use."""

from types import SimpleNamespace

import pytest

from titjudge.models.core.base import PermanentError
from titjudge.models.core.batch import BATCH_EMBEDDING_PROVIDERS, BATCH_PROVIDERS
from titjudge.models.litellm.batch.anthropic import AnthropicBatchAPI
from titjudge.models.litellm.batch.api import BATCH_ADAPTERS, OpenAIBatchAPI, batch_api_for
from titjudge.models.litellm.batch.embed import embedding_batch_api_for
from titjudge.models.litellm.batch.gemini import GeminiBatchAPI

BACKEND = SimpleNamespace(api_base="http://127.0.0.1:9/v1", timeout=12.0)


def test_every_provider_titjudge_batches_has_one_adapter():
    assert set(BATCH_ADAPTERS) == set(BATCH_PROVIDERS)


@pytest.mark.parametrize(
    ("model_id", "params", "adapter", "limit"),
    [
        ("openai/gpt-4o", {}, OpenAIBatchAPI, 50_000),
        ("azure/my-deployment", {"api_version": "2025-01-01"}, OpenAIBatchAPI, 100_000),
        ("anthropic/claude-sonnet-4-5", {}, AnthropicBatchAPI, 100_000),
        ("gemini/gemini-2.5-pro", {}, GeminiBatchAPI, None),
        ("my-model", {"custom_llm_provider": "openai"}, OpenAIBatchAPI, 50_000),
    ],
)
def test_the_adapter_is_the_providers_with_the_models_site(model_id, params, adapter, limit):
    api = batch_api_for(BACKEND, model_id, params, "sk-test")
    assert type(api) is adapter
    assert api.provider() == (params.get("custom_llm_provider") or model_id.split("/")[0])
    assert api._model == model_id.split("/")[-1] and api._timeout == 12.0
    assert api._api_key == "sk-test"
    if limit is not None:
        assert api.max_requests == limit
    if model_id.startswith("azure/"):
        assert api._api_version == "2025-01-01"


def test_no_adapter_for_an_unbatched_provider_or_several_endpoints():
    assert batch_api_for(BACKEND, "ollama/qwen3", {}, None) is None
    several = SimpleNamespace(
        api_base=["http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1"], timeout=1
    )
    assert batch_api_for(several, "openai/gpt-4o", {}, None) is None


def test_vertex_is_built_from_the_table_and_refuses_a_missing_bucket():
    with pytest.raises(PermanentError, match="batch on Vertex AI needs params"):
        batch_api_for(BACKEND, "vertex_ai/gemini-2.5-pro", {}, None)


def test_embeddings_batch_only_where_the_providers_api_takes_them():
    embedder = SimpleNamespace(settings=BACKEND)
    assert BATCH_EMBEDDING_PROVIDERS == ("openai",)
    api = embedding_batch_api_for(embedder, "openai/text-embedding-3-small", {}, None)
    assert api is not None and api.max_requests <= 50_000 and api._embedder is embedder
    assert embedding_batch_api_for(embedder, "azure/emb", {}, None) is None
