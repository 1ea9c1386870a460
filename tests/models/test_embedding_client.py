import asyncio

from titjudge.cache.store import CallCache
from titjudge.models.base import EmbeddingBackend
from titjudge.models.embedding_client import EmbeddingClient
from titjudge.models.spec import parse_model_spec


class CountingBackend(EmbeddingBackend):
    def __init__(self, fail_on: str | None = None):
        super().__init__(parse_model_spec("embed:counting"))
        self.batches: list[list[str]] = []
        self.fail_on = fail_on

    async def embed(self, texts):
        self.batches.append(list(texts))
        await asyncio.sleep(0.01)
        if self.fail_on in texts:
            raise RuntimeError("device lost")
        return [[float(len(t)), 1.0] for t in texts]


def test_concurrent_calls_share_one_embedding_per_text(tmp_path):
    backend = CountingBackend()
    client = EmbeddingClient(backend, CallCache(tmp_path))

    async def judge_all():
        return await asyncio.gather(
            *(client.embed(["the prompt", f"description {i}"], role="j") for i in range(13))
        )

    results = asyncio.run(judge_all())
    embedded = [text for batch in backend.batches for text in batch]
    assert embedded.count("the prompt") == 1 and len(embedded) == 14
    assert all(pair[0].ok and pair[0].value == [10.0, 1.0] for pair in results)
    assert sum(pair[0].cached for pair in results) == 12
    again = asyncio.run(client.embed(["the prompt", "the prompt"], role="j"))
    assert [r.cached for r in again] == [True, True] and len(backend.batches) == 13


def test_a_failed_batch_fails_its_texts_and_their_waiters_without_caching(tmp_path):
    backend = CountingBackend(fail_on="bad")
    client = EmbeddingClient(backend, CallCache(tmp_path))

    async def both():
        return await asyncio.gather(
            client.embed(["bad", "x"], role="j"), client.embed(["bad"], role="j")
        )

    first, second = asyncio.run(both())
    assert [r.ok for r in first] == [False, False] and not second[0].ok
    assert "device lost" in second[0].error and second[0].value is None
    assert asyncio.run(client.embed(["x"], role="j"))[0].ok  # nothing was cached for the failure
