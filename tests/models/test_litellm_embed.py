"""Served embeddings (`litellm:` in an embedding judge) against the loopback embeddings server
(doubles/embeddings_server.py, which cites the provider documentation it models)."""

from __future__ import annotations

import asyncio
import functools
import math
import time
from pathlib import Path

import pytest
from doubles.embeddings_server import (
    EmbeddingsServer,
    gemini_rate_limited,
    openai_bad_request,
    openai_context_refusal,
    openai_rate_limited,
    openai_unauthorized,
    server_error,
    vllm_context_refusal,
)
from doubles.server_text import hashed_embedding

from titjudge.cache.store import CallCache
from titjudge.judges.embedding import EmbeddingJudge, EmbeddingJudgeConfig, cosine, query_text
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.calls.keys import embedding_key
from titjudge.models.calls.limits import Limiter
from titjudge.models.core.base import EmbeddingBackend
from titjudge.models.core.clients import SEND
from titjudge.models.core.lazy import LazyBackend
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeInput
from titjudge.records.spec import parse_model_spec

QWEN = "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B"
INSTRUCTION = "Given an image description, judge how well it matches the prompt"
PROMPT = "a red fox curled on a mossy stone beside a quiet river"
DESCRIPTION = "A red fox sleeps curled up on a stone covered in moss near a river."


@pytest.fixture
def server():
    with EmbeddingsServer(dim=64) as srv:
        yield srv


def fast(**options) -> ModelOptions:
    return ModelOptions(backoff_initial=0.0, backoff_max=5.0, timeout=30, **options)


def served(cache_dir: Path, server: EmbeddingsServer, model: str = QWEN, **options):
    hub = ModelHub(CallCache(cache_dir))
    return hub.embedding_client(model, fast(api_base=server.url, **options))


def item() -> Item:
    return Item("i1", "p1", PROMPT, Path("/nonexistent.png"), "t2i")


def judge_once(client: EmbeddingClient, instruction: str | None = INSTRUCTION):
    judge = EmbeddingJudge(
        EmbeddingJudgeConfig(
            name="tit_score", kind="embedding", model=client.model, instruction=instruction
        ),
        client,
    )
    return asyncio.run(judge.judge(JudgeInput(item(), None, Described(DESCRIPTION)), probe=SEND))


class HashedLocal(EmbeddingBackend):
    """A local backend computing the vectors the server computes."""

    async def embed(self, texts):
        return [hashed_embedding(text, 64) for text in texts]


def test_served_tit_score_equals_the_local_judges_cosine_of_the_same_vectors(tmp_path, server):
    local = EmbeddingClient(
        HashedLocal(parse_model_spec("embed:hashed")),
        CallCache(tmp_path / "local"),
        Limiter(4),
        ModelOptions(),
    )
    expected = judge_once(local)
    outcome = judge_once(served(tmp_path / "served", server))
    assert outcome.status == "ok" and outcome.score == expected.score
    by_hand = cosine(
        hashed_embedding(query_text(PROMPT, INSTRUCTION), 64), hashed_embedding(DESCRIPTION, 64)
    )
    assert outcome.score == round(by_hand, 6) and 0.2 < outcome.score < 1.0
    # the Qwen3-Embedding query format on the prompt side only, exactly as the local path sends
    (sent,) = server.inputs()
    assert sent == [f"Instruct: {INSTRUCTION}\nQuery:{PROMPT}", DESCRIPTION]
    assert server.requests[0]["body"]["model"] == "Qwen/Qwen3-Embedding-8B"


def test_no_instruction_is_added_by_model_name(tmp_path, server):
    judge_once(served(tmp_path, server), instruction=None)
    assert server.inputs() == [[PROMPT, DESCRIPTION]]


def test_vectors_returned_out_of_order_are_placed_by_index(tmp_path, server):
    server.shuffle = True
    client = served(tmp_path, server)
    texts = ["a cat on a mat", "a lighthouse on a cliff", "a bowl of ramen"]
    results = asyncio.run(client.embed(texts, role="judge", probe=SEND))
    for text, result in zip(texts, results, strict=True):
        assert result.ok and result.value == pytest.approx(hashed_embedding(text, 64))
    assert server.requests[0]["body"]["input"] == texts


def test_a_rerun_asks_the_server_nothing_and_loads_no_backend(tmp_path, server):
    first = judge_once(served(tmp_path, server))
    assert len(server.requests) == 1
    again_client = served(tmp_path, server)
    again = judge_once(again_client)
    assert again.score == first.score and again.cached
    assert len(server.requests) == 1
    assert isinstance(again_client.backend, LazyBackend) and not again_client.backend.built


def test_a_429_is_retried_after_its_retry_after(tmp_path, server):
    server.fail(openai_rate_limited(retry_after="1"))
    client = served(tmp_path, server, max_attempts=3)
    started = time.monotonic()
    results = asyncio.run(client.embed(["a cat", "a dog"], role="judge", probe=SEND))
    assert all(r.ok and r.attempts == 2 for r in results)
    assert time.monotonic() - started >= 0.9  # waited the server's Retry-After, not the backoff
    assert len(server.requests) == 2


def test_a_5xx_is_retried_then_given_up_as_a_failure_record_never_cached(tmp_path, server):
    server.fail(server_error(), server_error())
    client = served(tmp_path, server, max_attempts=2)
    (failed,) = asyncio.run(client.embed(["a cat"], role="judge", probe=SEND))
    assert not failed.ok and failed.value is None and failed.attempts == 2
    assert failed.error.startswith("gave up after 2 attempts: InternalServerError")
    assert client.cache.entries() == 0
    (again,) = asyncio.run(
        client.embed(["a cat"], role="judge", probe=SEND)
    )  # the same run: shared
    assert not again.ok and again.error == failed.error and len(server.requests) == 2
    (fresh,) = asyncio.run(
        served(tmp_path, server).embed(["a cat"], role="judge", probe=SEND)
    )  # a re-run
    assert fresh.ok and len(server.requests) == 3


@pytest.mark.parametrize(
    "refusal",
    [
        openai_context_refusal,
        vllm_context_refusal,
        functools.partial(vllm_context_refusal, legacy=True),
    ],
    ids=["openai", "vllm", "vllm-legacy"],
)
def test_a_text_over_the_context_fails_alone_after_one_attempt(tmp_path, server, refusal):
    query = query_text(PROMPT, INSTRUCTION)
    server.refuse(query, refusal)
    client = served(tmp_path, server, max_attempts=3)
    outcome = judge_once(client)
    assert outcome.status == "failed" and outcome.score is None
    assert "embedding of the prompt failed: context length exceeded" in outcome.error
    assert "maximum context length is 8192 tokens" in outcome.error
    # the pair was refused, then each text asked alone, once: the description is answered
    assert sorted(server.inputs()) == sorted([[query, DESCRIPTION], [query], [DESCRIPTION]])
    assert client.cache.entries() == 1
    (description,) = asyncio.run(client.embed([DESCRIPTION], role="judge", probe=SEND))
    assert description.cached and len(server.requests) == 3


def test_a_400_naming_a_parameter_is_the_whole_requests_and_not_split(tmp_path, server):
    server.fail(openai_bad_request("This model does not support 'dimensions'.", param="dimensions"))
    client = served(tmp_path, server, max_attempts=3)
    results = asyncio.run(client.embed(["a cat", "a dog"], role="judge", probe=SEND))
    assert [r.ok for r in results] == [False, False]
    assert all("does not support 'dimensions'" in r.error and r.attempts == 1 for r in results)
    assert len(server.requests) == 1 and client.cache.entries() == 0


def test_a_401_echoing_the_key_is_permanent_and_redacted(tmp_path, server, monkeypatch):
    key = "sk-served-embeddings-secret-0123456789"
    monkeypatch.setenv("TITJUDGE_TEST_EMBED_KEY", key)
    server.fail(openai_unauthorized(key))
    client = served(tmp_path, server, api_key_env="TITJUDGE_TEST_EMBED_KEY", max_attempts=3)
    (failed,) = asyncio.run(client.embed(["a cat"], role="judge", probe=SEND))
    assert not failed.ok and failed.attempts == 1
    assert "Incorrect API key provided: [REDACTED]" in failed.error
    assert key not in failed.error
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {key}"


def test_a_zero_vector_is_a_failure_record_with_its_reason(tmp_path, server):
    server.vector = lambda text, dim: (
        [0.0] * dim if "Instruct" in text else hashed_embedding(text, dim)
    )
    client = served(tmp_path, server)
    outcome = judge_once(client)
    assert outcome.status == "failed" and outcome.score is None
    assert "backend returned a zero vector" in outcome.error
    # the description's vector was paid for and is sound: kept, never asked again
    assert client.cache.entries() == 1
    judge_once(client)  # the same run: the failed text is not sent again, the other is cached
    assert server.inputs()[1:] == []
    judge_once(served(tmp_path, server))  # a re-run asks only for the failed text
    assert server.inputs()[1:] == [[query_text(PROMPT, INSTRUCTION)]]


def test_vectors_of_different_lengths_are_a_failure_record(tmp_path, server):
    server.vector = lambda text, dim: hashed_embedding(
        text, dim if "Instruct" in text else dim // 2
    )
    outcome = judge_once(served(tmp_path, server))
    assert outcome.status == "failed" and "different lengths (32, 64)" in outcome.error


def test_the_judge_refuses_embeddings_of_different_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        cosine([1.0, 0.0], [1.0, 0.0, 0.0])


def test_texts_go_in_requests_of_at_most_batch_size(tmp_path, server):
    client = served(tmp_path, server, batch_size=3)
    texts = [f"text number {i}" for i in range(7)]
    results = asyncio.run(client.embed(texts, role="judge", probe=SEND))
    assert all(r.ok for r in results)
    assert sorted(len(batch) for batch in server.inputs()) == [1, 3, 3]
    assert sorted(t for batch in server.inputs() for t in batch) == sorted(texts)


def test_dimensions_and_base64_reach_the_server_and_come_back_as_floats(tmp_path, server):
    client = served(tmp_path, server, params={"dimensions": 16, "encoding_format": "base64"})
    (result,) = asyncio.run(client.embed(["a red fox"], role="judge", probe=SEND))
    assert server.requests[0]["body"]["dimensions"] == 16
    assert server.requests[0]["body"]["encoding_format"] == "base64"
    assert result.ok and result.value == pytest.approx(hashed_embedding("a red fox", 16), abs=1e-6)
    assert math.isclose(sum(x * x for x in result.value), 1.0, rel_tol=1e-5)


def test_the_cache_key_holds_model_instruction_text_and_dimensions():
    spec = parse_model_spec(QWEN)
    base = embedding_key(spec, query_text(PROMPT, INSTRUCTION), params={"dimensions": 256})
    assert base != embedding_key(spec, query_text(PROMPT, None), params={"dimensions": 256})
    assert base != embedding_key(spec, query_text(PROMPT, "other"), params={"dimensions": 256})
    assert base != embedding_key(spec, query_text(PROMPT, INSTRUCTION), params={"dimensions": 64})
    other = parse_model_spec("litellm:hosted_vllm/Qwen/Qwen3-Embedding-4B")
    assert base != embedding_key(other, query_text(PROMPT, INSTRUCTION), params={"dimensions": 256})


def test_gemini_embeddings_go_to_batch_embed_contents_with_task_type(tmp_path, server, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-served-embeddings-test-key")
    hub = ModelHub(CallCache(tmp_path))
    options = fast(api_base=server.gemini_base, params={"task_type": "SEMANTIC_SIMILARITY"})
    client = hub.embedding_client("litellm:gemini/gemini-embedding-001", options)
    texts = [f"caption {i} of a harbour at dusk" for i in range(101)]
    results = asyncio.run(client.embed(texts, role="judge", probe=SEND))
    assert all(r.ok for r in results)
    assert results[5].value == pytest.approx(hashed_embedding(texts[5], 64))
    # batchEmbedContents takes at most 100 requests per batch
    assert sorted(len(batch) for batch in server.inputs()) == [1, 100]
    request = server.requests[0]
    assert request["path"] == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert request["headers"]["x-goog-api-key"] == "AIza-served-embeddings-test-key"
    assert {r["taskType"] for r in request["body"]["requests"]} == {"SEMANTIC_SIMILARITY"}


def test_a_gemini_429_waits_its_retry_delay(tmp_path, server, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-served-embeddings-test-key")
    server.fail(gemini_rate_limited("1s"))
    hub = ModelHub(CallCache(tmp_path))
    client = hub.embedding_client(
        "litellm:gemini/gemini-embedding-001", fast(api_base=server.gemini_base, max_attempts=2)
    )
    started = time.monotonic()
    (result,) = asyncio.run(client.embed(["a harbour"], role="judge", probe=SEND))
    assert result.ok and result.attempts == 2 and time.monotonic() - started >= 0.9


def test_the_openai_route_sends_one_request_per_attempt(tmp_path, server, monkeypatch):
    """litellm's OpenAI embedding route reads max_retries=0 as unset and retries twice on its
    own; the backend turns that off, so the call layer's attempts are the only ones."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-served-embeddings-test-0123456789")
    server.fail(openai_rate_limited(retry_after="0"))
    client = served(tmp_path, server, model="litellm:openai/text-embedding-3-small", max_attempts=1)
    (failed,) = asyncio.run(client.embed(["a cat"], role="judge", probe=SEND))
    assert not failed.ok and failed.attempts == 1
    assert "Rate limit reached for text-embedding-3-small" in failed.error
    assert len(server.requests) == 1
