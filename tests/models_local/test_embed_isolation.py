"""A local `embed:` model's failure on one text fails that text alone, whichever texts the
micro-batcher put in its window (tiny offline checkpoints, both layouts)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from titjudge.cache.store import CallCache
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.calls.limits import Limiter
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions

POISON = "a text this model cannot embed"
TEXTS = [f"a quiet harbour with {n} boats at dawn" for n in range(10)]


def poisoned(backend: Any, monkeypatch: pytest.MonkeyPatch, error: Exception) -> list[list[str]]:
    """Make `backend` raise `error` for any window holding POISON; returns the windows run."""
    windows: list[list[str]] = []
    real = backend._embed_window

    def window(key: Any, texts: list[str]) -> list[Any]:
        windows.append(list(texts))
        if POISON in texts:
            raise error
        return real(key, texts)

    monkeypatch.setattr(backend, "_embed_window", window)
    return windows


def judge_pairs(client: EmbeddingClient, pairs: list[list[str]]) -> list[list[Any]]:
    async def all_at_once() -> list[list[Any]]:
        return await asyncio.gather(
            *(client.embed(pair, role="judge", probe=SEND) for pair in pairs)
        )

    return asyncio.run(all_at_once())


@pytest.mark.slow
@pytest.mark.parametrize("which", ["qwen3_embedder", "st_embedder"])
def test_a_text_that_fails_in_a_shared_window_fails_alone(
    which: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    backend = request.getfixturevalue(which)
    reference = {t: np.array(asyncio.run(backend.embed([t]))[0]) for t in TEXTS}
    windows = poisoned(backend, monkeypatch, RuntimeError("index out of range in self"))
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(64), ModelOptions())
    # 5 items judged at once: prompt and description each; one description is poisoned
    pairs = [[TEXTS[2 * i], TEXTS[2 * i + 1]] for i in range(5)]
    pairs[3][1] = POISON
    results = judge_pairs(client, pairs)
    assert max(len(w) for w in windows) > 2  # the items really met in one window
    failed = {(i, j) for i, pair in enumerate(results) for j, r in enumerate(pair) if not r.ok}
    assert failed == {(3, 1)}
    assert "RuntimeError: index out of range in self" in results[3][1].error
    for pair, texts in zip(results, pairs, strict=True):
        for result, text in zip(pair, texts, strict=True):
            if result.ok:
                np.testing.assert_allclose(result.value, reference[text], atol=1e-5)
    assert client.cache.entries() == 9  # every vector kept, the failure not


@pytest.mark.slow
def test_out_of_memory_on_one_text_fails_that_text_alone(
    st_embedder: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """sentence-transformers halves its batch on out-of-memory; one text still out of memory
    at batch size 1 fails alone, not its whole window."""
    real = st_embedder.model.encode

    def encode(texts: list[str], **kwargs: Any) -> Any:
        if POISON in texts:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(texts, **kwargs)

    monkeypatch.setattr(st_embedder.model, "encode", encode)
    client = EmbeddingClient(st_embedder, CallCache(tmp_path), Limiter(64), ModelOptions())
    pairs = [[TEXTS[0], POISON], [TEXTS[1], TEXTS[2]], [TEXTS[3], TEXTS[4]]]
    results = judge_pairs(client, pairs)
    assert [[r.ok for r in pair] for pair in results] == [[True, False], [True, True], [True, True]]
    assert "out of accelerator memory embedding one text" in results[0][1].error


def test_a_text_failing_in_a_ray_actor_comes_back_alone(tmp_path: Path) -> None:
    """What an actor sends back per text (a vector, or that text's RemoteFailure) reaches the
    client per text (the actor pool here is a stand-in: no Ray instance is started)."""
    pytest.importorskip("ray")
    from titjudge.models.ray.actors import RemoteFailure
    from titjudge.models.ray.backend import RayEmbeddingBackend
    from titjudge.records.spec import parse_model_spec

    class Pool:
        size, facts = 1, {"default_concurrency": 4}

        async def call(self, method: str, texts: list[str]) -> list[Any]:
            assert method == "embed_each"
            failure = RemoteFailure("permanent", "RuntimeError: index out of range in self")
            return [failure if t == POISON else [1.0, float(len(t))] for t in texts]

    backend = RayEmbeddingBackend(parse_model_spec("embed:in-actors"), Pool())  # type: ignore[arg-type]
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(4), ModelOptions())
    results = asyncio.run(client.embed([TEXTS[0], POISON, TEXTS[1]], role="judge", probe=SEND))
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].error == "RuntimeError: index out of range in self"
