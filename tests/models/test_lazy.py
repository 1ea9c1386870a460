"""LazyBackend: built once, on the first call that must be sent, outside the limiter; a failed
build fails every call at once with its reason; the hub's limiter takes the built default."""

import asyncio

from titjudge.cache.store import CallCache
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.core.base import EmbeddingBackend
from titjudge.models.core.clients import SEND
from titjudge.models.core.lazy import BackendPlan, LazyBackend
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.spec import parse_model_spec

SPEC = parse_model_spec("embed:/models/e")


class Embedder(EmbeddingBackend):
    default_concurrency = 3

    def __init__(self):
        super().__init__(SPEC)
        self.seen: list[list[str]] = []

    async def embed(self, texts):
        self.seen.append(texts)
        return [[1.0, 0.0] for _ in texts]


OPTIONS = ModelOptions(max_attempts=3, backoff_initial=0.01)


def _client(tmp_path, build, options=OPTIONS):
    """An embedding client as the hub makes it, on a lazy backend with the given build."""
    hub = ModelHub(CallCache(tmp_path / "cache"), default_concurrency=32)
    backend = LazyBackend(SPEC, BackendPlan(default_concurrency=64), build)
    return EmbeddingClient(backend, hub.cache, hub._limiter(options, backend), options)


def test_built_once_on_the_first_miss_and_never_for_cached_answers(tmp_path):
    builds = []

    def build():
        builds.append(1)
        return Embedder()

    client = _client(tmp_path, build)
    assert client.limiter.concurrency == 32  # min(run's 32, plan's 64) before the build

    async def go():
        first = await asyncio.gather(
            *(client.embed([f"t{i}"], role="j", probe=SEND) for i in range(5))
        )
        return first, await client.embed(["t0", "t1"], role="j", probe=SEND)

    first, again = asyncio.run(go())
    assert all(r[0].ok for r in first) and all(r.cached for r in again)
    assert builds == [1]  # five concurrent first calls, one build
    assert client.limiter.concurrency == 3  # the built backend's default replaced the plan's

    cached_only = _client(tmp_path, lambda: (_ for _ in ()).throw(AssertionError("built")))
    results = asyncio.run(cached_only.embed(["t0", "t3"], role="j", probe=SEND))
    assert all(r.ok and r.cached for r in results)
    assert cached_only.backend.describe()["loaded"] is False


def test_a_failed_build_fails_every_call_with_its_reason_and_is_not_retried(tmp_path):
    builds = []

    def build():
        builds.append(1)
        raise OSError("weights file truncated")

    client = _client(tmp_path, build)
    results = asyncio.run(client.embed(["a", "b"], role="j", probe=SEND))
    results += asyncio.run(client.embed(["c"], role="j", probe=SEND))
    assert builds == [1]
    assert [r.ok for r in results] == [False, False, False]
    assert all("cannot load the backend: weights file truncated" in r.error for r in results)
    assert all(r.attempts == 0 for r in results)  # nothing was sent
    assert len(client.cache) == 0  # a failure is never cached
