"""Served embeddings keep the model their reply names, as text calls do: an embedding judge's
outcome lists it, `run.require_model: exact` refuses vectors from another model (a failure
record naming both, never cached), and cache entries written before this record still hit.

The reply shape is OpenAI's embeddings object (`"model"` beside `"data"`: OpenAI API reference,
Embeddings, "The embedding object" / create response), which vLLM's /v1/embeddings mirrors;
the double answers under another name to stand for a provider that re-routed the request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from doubles.embeddings_server import EmbeddingsServer

from titjudge.cache.store import CallCache
from titjudge.judges.embedding import EmbeddingJudge, EmbeddingJudgeConfig
from titjudge.models.calls.embedding_client import _vector_hit
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeInput

MODEL = "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B"
PROMPT = "a red fox curled on a mossy stone beside a quiet river"
DESCRIPTION = "A red fox sleeps curled up on a stone covered in moss near a river."


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer(dim=32) as srv:
        yield srv


def _judge(cache_dir: Path, server: EmbeddingsServer, require_model: str = "report"):
    hub = ModelHub(CallCache(cache_dir), require_model=require_model)  # type: ignore[arg-type]
    options = ModelOptions(backoff_initial=0.0, timeout=30, api_base=server.url)
    client = hub.embedding_client(MODEL, options)
    judge = EmbeddingJudge(
        EmbeddingJudgeConfig(name="tit_score", kind="embedding", model=MODEL), client
    )
    item = Item("i1", "p1", PROMPT, Path("/nonexistent.png"), "t2i")
    return asyncio.run(
        judge.judge(JudgeInput(item, None, Described(DESCRIPTION)), probe=SEND)
    ), client


def test_the_answering_model_is_kept_and_a_cached_rerun_still_names_it(tmp_path, server):
    outcome, _ = _judge(tmp_path, server)
    assert outcome.status == "ok" and outcome.answered_by == ["Qwen/Qwen3-Embedding-8B"]
    again, _ = _judge(tmp_path, server)
    assert again.cached and again.answered_by == ["Qwen/Qwen3-Embedding-8B"]
    assert len(server.requests) == 1


def test_a_rerouted_reply_is_reported_and_kept_by_default(tmp_path, server):
    server.answer_as = "Qwen/Qwen3-Embedding-0.6B"
    outcome, client = _judge(tmp_path, server)
    assert outcome.status == "ok" and outcome.answered_by == ["Qwen/Qwen3-Embedding-0.6B"]
    assert client.usage["judge"].answered_by == {"Qwen/Qwen3-Embedding-0.6B": 2}


def test_exact_refuses_another_models_vectors_and_caches_nothing(tmp_path, server):
    server.answer_as = "Qwen/Qwen3-Embedding-0.6B"
    outcome, client = _judge(tmp_path, server, require_model="exact")
    assert outcome.status == "failed" and outcome.score is None
    assert "answered by Qwen/Qwen3-Embedding-0.6B" in (outcome.error or "")
    assert "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B" in (outcome.error or "")
    assert client.cache.entries() == 0


def test_exact_asks_again_for_a_cached_vector_from_another_model(tmp_path, server):
    server.answer_as = "Qwen/Qwen3-Embedding-0.6B"
    assert _judge(tmp_path, server)[0].status == "ok"  # cached under report
    server.answer_as = None
    outcome, _ = _judge(tmp_path, server, require_model="exact")
    assert outcome.status == "ok" and outcome.answered_by == ["Qwen/Qwen3-Embedding-8B"]
    assert len(server.requests) == 2  # the other model's vectors were not taken from the cache


def test_cache_entries_before_the_record_still_hit() -> None:
    old = _vector_hit([0.6, 0.8])
    assert old is not None and old.value == [0.6, 0.8] and old.answered_by is None
    new = _vector_hit({"vector": [0.6, 0.8], "answered_by": "m"})
    assert new is not None and new.value == [0.6, 0.8] and new.answered_by == "m"
    assert _vector_hit({"text": "x"}) is None
