import asyncio
import math
import os
import socket

from titjudge.cache.store import CallCache
from titjudge.models import hub as hub_module
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.calls.keys import embedding_key
from titjudge.models.calls.limits import Limiter
from titjudge.models.core.base import EmbeddingBackend, TransientError
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.spec import parse_model_spec


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
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(16), ModelOptions())

    async def judge_all():
        return await asyncio.gather(
            *(
                client.embed(["the prompt", f"description {i}"], role="j", probe=SEND)
                for i in range(13)
            )
        )

    results = asyncio.run(judge_all())
    embedded = [text for batch in backend.batches for text in batch]
    assert embedded.count("the prompt") == 1 and len(embedded) == 14
    assert all(pair[0].ok and pair[0].value == [10.0, 1.0] for pair in results)
    assert sum(pair[0].cached for pair in results) == 12
    again = asyncio.run(client.embed(["the prompt", "the prompt"], role="j", probe=SEND))
    assert [r.cached for r in again] == [True, True] and len(backend.batches) == 13


def test_a_failed_batch_fails_its_texts_and_their_waiters_without_caching(tmp_path):
    backend = CountingBackend(fail_on="bad")
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(16), ModelOptions())

    async def both():
        return await asyncio.gather(
            client.embed(["bad", "x"], role="j", probe=SEND),
            client.embed(["bad"], role="j", probe=SEND),
        )

    first, second = asyncio.run(both())
    assert [r.ok for r in first] == [False, False] and not second[0].ok
    assert "device lost" in second[0].error and second[0].value is None
    (again,) = asyncio.run(
        client.embed(["x"], role="j", probe=SEND)
    )  # the same run: the failure shared
    assert not again.ok and again.error == first[1].error
    rerun = EmbeddingClient(backend, CallCache(tmp_path), Limiter(16), ModelOptions())
    assert asyncio.run(rerun.embed(["x"], role="j", probe=SEND))[
        0
    ].ok  # nothing was cached for the failure


class ScriptedBackend(EmbeddingBackend):
    """Fails the first `transient` requests with a retryable error; sleeps `delay` per request."""

    def __init__(self, transient: int = 0, delay: float = 0.0, reply=None):
        super().__init__(parse_model_spec("embed:scripted"))
        self.transient = transient
        self.delay = delay
        self.reply = reply
        self.requests = 0
        self.in_flight = 0
        self.peak = 0

    async def embed(self, texts):
        self.requests += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if self.requests <= self.transient:
                raise TransientError("503 busy")
            return self.reply(texts) if self.reply else [[float(len(t)), 1.0] for t in texts]
        finally:
            self.in_flight -= 1


def fast(**options):
    return ModelOptions(backoff_initial=0.0, backoff_max=0.0, **options)


def test_a_transient_error_is_retried_and_the_answer_cached(tmp_path):
    backend = ScriptedBackend(transient=2)
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(4), fast(max_attempts=3))
    (result,) = asyncio.run(client.embed(["a cat"], role="j", probe=SEND))
    assert result.ok and result.value == [5.0, 1.0] and result.attempts == 3
    (again,) = asyncio.run(client.embed(["a cat"], role="j", probe=SEND))
    assert again.cached and again.value == [5.0, 1.0] and backend.requests == 3
    assert client.usage["j"].calls == 2 and client.usage["j"].cache_hits == 1


def test_giving_up_is_a_failure_record_and_nothing_is_cached(tmp_path):
    backend = ScriptedBackend(transient=2)
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(4), fast(max_attempts=2))
    first, second = asyncio.run(client.embed(["a", "b"], role="j", probe=SEND))
    assert not first.ok and first.value is None and first.attempts == 2
    assert first.error == "gave up after 2 attempts: 503 busy" == second.error
    assert client.usage["j"].failures == 2
    assert client.cache.entries() == 0
    sent = backend.requests
    assert not asyncio.run(client.embed(["a"], role="j", probe=SEND))[0].ok  # the same run: shared
    assert backend.requests == sent
    rerun = EmbeddingClient(backend, CallCache(tmp_path), Limiter(4), fast(max_attempts=2))
    assert asyncio.run(rerun.embed(["a"], role="j", probe=SEND))[
        0
    ].ok  # a re-run asks again: recovered


def test_each_attempt_times_out_per_timeout(tmp_path):
    backend = ScriptedBackend(delay=1.0)
    client = EmbeddingClient(
        backend, CallCache(tmp_path), Limiter(4), fast(timeout=0.05, max_attempts=2)
    )
    (result,) = asyncio.run(
        client.embed(["slow"], role="j", probe=SEND)
    )  # an attempt left alone: a 1 s vector
    assert not result.ok and result.error == "gave up after 2 attempts: no reply within 0.05 s"
    assert backend.requests == 2 and client.cache.entries() == 0


def test_concurrency_bounds_requests_in_flight(tmp_path):
    backend = ScriptedBackend(delay=0.02)
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(2), fast())

    async def many():
        return await asyncio.gather(
            *(client.embed([f"text {i}"], role="j", probe=SEND) for i in range(10))
        )

    results = asyncio.run(many())
    assert all(r[0].ok for r in results) and backend.requests == 10
    assert backend.peak == 2 and client.limiter.peak_in_flight == 2


def test_the_hub_limits_embeddings_by_the_model_options(tmp_path, monkeypatch):
    backend = ScriptedBackend()
    monkeypatch.setattr(hub_module, "build_embedding_backend", lambda spec, options, **_: backend)
    hub = ModelHub(CallCache(tmp_path))
    client = hub.embedding_client("embed:scripted", ModelOptions(concurrency=3, rpm=600))
    assert (client.limiter.concurrency, client.limiter.rpm) == (3, 600)
    assert client.backend is backend and client.options.concurrency == 3


def test_wrong_vector_count_or_non_finite_values_are_failures(tmp_path):
    short = ScriptedBackend(reply=lambda texts: [[1.0]])
    client = EmbeddingClient(short, CallCache(tmp_path / "a"), Limiter(4), fast())
    results = asyncio.run(client.embed(["x", "y"], role="j", probe=SEND))
    assert [r.ok for r in results] == [False, False]
    assert results[0].error == "InvalidEmbeddingError: backend returned 1 vectors for 2 texts"
    nan = ScriptedBackend(reply=lambda texts: [[math.nan, 1.0] for _ in texts])
    client = EmbeddingClient(nan, CallCache(tmp_path / "b"), Limiter(4), fast())
    (result,) = asyncio.run(client.embed(["x"], role="j", probe=SEND))
    assert not result.ok and "non-finite" in result.error and client.cache.entries() == 0


def test_a_text_claimed_by_another_run_is_waited_for_not_recomputed(tmp_path):
    backend = ScriptedBackend()
    cache = CallCache(tmp_path)
    client = EmbeddingClient(backend, cache, Limiter(4), fast())
    key = embedding_key(backend.spec, "shared", params={})
    other_run = [socket.gethostname(), os.getppid()]  # alive, and not this process
    cache._store.set(f"claim:{key}", other_run, expire=60)

    async def both():
        task = asyncio.ensure_future(client.embed(["mine", "shared"], role="j", probe=SEND))
        await asyncio.sleep(0.2)
        assert not task.done()  # "mine" was computed meanwhile; "shared" is awaited
        cache.set(key, [7.0, 1.0], "embed:scripted")
        cache.release(key)
        return await task

    mine, shared = asyncio.run(both())
    assert mine.ok and mine.value == [4.0, 1.0] and not mine.cached
    assert shared.cached and shared.value == [7.0, 1.0]
    assert backend.requests == 1


def test_a_cached_text_is_not_held_back_by_a_computed_one_beside_it(tmp_path):
    backend = ScriptedBackend(delay=0.3)
    client = EmbeddingClient(backend, CallCache(tmp_path), Limiter(4), fast())
    asyncio.run(client.embed(["the prompt"], role="j", probe=SEND))
    finished = []

    async def judge(texts, name):
        await client.embed(texts, role="j", probe=SEND)
        finished.append(name)

    async def both():
        await asyncio.gather(
            judge(["the prompt", "a new description"], "slow"), judge(["the prompt"], "cached")
        )

    asyncio.run(both())
    assert finished == ["cached", "slow"]
    assert client.usage["j"].cache_hits == 2 and backend.requests == 2
