"""A text's embedding never depends on which other texts shared its request: served models
against the loopback embeddings server (doubles/embeddings_server.py: it refuses any request
carrying a given text with vLLM's or OpenAI's documented 400), and the call layer's own
retry rules for errors that are not any one text's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from doubles.embeddings_server import (
    EmbeddingsServer,
    openai_context_refusal,
    openai_unauthorized,
    server_error,
    vllm_context_refusal,
)

from titjudge.cache.store import CallCache
from titjudge.judges.embedding import EmbeddingJudge, EmbeddingJudgeConfig
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeInput

VLLM = "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B"
OPENAI = "litellm:openai/text-embedding-3-small"
TEXTS = [f"a small painting number {i} of a lighthouse on a cliff" for i in range(13)]
POISON = "a long description that the server refuses as over its context length"


@pytest.fixture
def server():
    with EmbeddingsServer(dim=16) as srv:
        yield srv


def served(cache_dir: Path, server: EmbeddingsServer, model: str = VLLM, **options):
    hub = ModelHub(CallCache(cache_dir))
    return hub.embedding_client(
        model, ModelOptions(api_base=server.url, backoff_initial=0.0, backoff_max=0.0, **options)
    )


def failing(results) -> set[int]:
    return {i for i, result in enumerate(results) if not result.ok}


#: the splitting is the client's own, the same whichever provider refused: every batch size
#: for vLLM's refusal; for OpenAI's (which must be read as a refusal of what the request
#: carries too), one split of a few and one of the whole request
SIZES = {VLLM: (1, 2, 3, 5, 8, 14), OPENAI: (3, 14)}


@pytest.mark.parametrize(
    ("model", "refusal"),
    [
        pytest.param(VLLM, vllm_context_refusal, marks=pytest.mark.slow),  # ~0.5 s of CPU
        (OPENAI, openai_context_refusal),
    ],
)
@pytest.mark.slow
@pytest.mark.parametrize("position", [0, 6, 13])
def test_only_the_refused_text_fails_whatever_the_batch_size(
    tmp_path, server, monkeypatch, model, refusal, position
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    server.refuse(POISON, refusal)
    texts = [*TEXTS[:position], POISON, *TEXTS[position:]]
    for size in SIZES[model]:
        server.requests.clear()
        client = served(tmp_path / f"{size}", server, model, batch_size=size)
        results = asyncio.run(client.embed(texts, role="judge", probe=SEND))
        assert failing(results) == {position}, f"batch_size {size}"
        assert "maximum context length is 8192 tokens" in results[position].error
        assert results[position].attempts == 1
        assert all(r.value is not None and len(r.value) == 16 for r in results if r.ok)
        # no text is paid for twice: each good text is in exactly one answered request
        answered = [batch for batch in server.inputs() if POISON not in batch]
        assert sorted(t for batch in answered for t in batch) == sorted(TEXTS)
        assert client.cache.entries() == len(TEXTS)  # the refusal is never cached


@pytest.mark.slow
def test_an_item_beside_a_refused_text_is_not_failed_by_it(tmp_path, server):
    """13 images of one prompt judged at once: the prompt travels in one item's request and
    the other items wait for it. The item whose description is refused fails alone."""
    prompt = "a lighthouse on a cliff above a stormy sea at dusk"
    descriptions = [f"a lighthouse on a cliff, painting number {i}" for i in range(13)]
    for poisoned in (0, 7):
        server.refuse(descriptions[poisoned])
        judge = EmbeddingJudge(
            EmbeddingJudgeConfig(name="tit_score", kind="embedding", model=VLLM),
            served(tmp_path / f"{poisoned}", server),
        )

        async def judge_all(judge: EmbeddingJudge = judge):
            return await asyncio.gather(
                *(
                    judge.judge(
                        JudgeInput(
                            Item(f"i{i}", "p1", prompt, Path("/x.png"), "t2i"), None, Described(d)
                        ),
                        probe=SEND,
                    )
                    for i, d in enumerate(descriptions)
                )
            )

        outcomes = asyncio.run(judge_all())
        assert {i for i, o in enumerate(outcomes) if o.status != "ok"} == {poisoned}
        assert "embedding of the description failed" in outcomes[poisoned].error
        server._refused.clear()


def test_a_transient_error_retries_the_whole_request_and_never_splits_it(tmp_path, server):
    server.fail(server_error())
    client = served(tmp_path / "a", server, max_attempts=3)
    results = asyncio.run(client.embed(TEXTS[:4], role="judge", probe=SEND))
    assert all(r.ok and r.attempts == 2 for r in results)
    assert server.inputs() == [TEXTS[:4], TEXTS[:4]]
    server.requests.clear()
    server.fail(server_error(), server_error())
    client = served(tmp_path / "b", server, max_attempts=2)
    results = asyncio.run(client.embed(TEXTS[:4], role="judge", probe=SEND))
    assert all(not r.ok and r.error.startswith("gave up after 2 attempts") for r in results)
    assert server.inputs() == [TEXTS[:4], TEXTS[:4]]  # given up as a whole, not split


def test_a_key_refusal_is_the_whole_requests_and_not_split(tmp_path, server, monkeypatch):
    monkeypatch.setenv("TITJUDGE_TEST_EMBED_KEY", "sk-wrong-0123456789")
    server.fail(openai_unauthorized("sk-wrong-0123456789"))
    client = served(tmp_path, server, api_key_env="TITJUDGE_TEST_EMBED_KEY", max_attempts=3)
    results = asyncio.run(client.embed(TEXTS[:4], role="judge", probe=SEND))
    assert all(not r.ok and "AuthenticationError" in r.error for r in results)
    assert len(server.requests) == 1


@pytest.mark.slow
def test_every_text_refused_costs_at_most_two_n_minus_one_requests(tmp_path, server):
    for text in TEXTS[:8]:
        server.refuse(text)
    client = served(tmp_path, server, batch_size=8)
    results = asyncio.run(client.embed(TEXTS[:8], role="judge", probe=SEND))
    assert failing(results) == set(range(8))
    assert len(server.requests) == 2 * 8 - 1
    assert isinstance(client, EmbeddingClient) and client.cache.entries() == 0
