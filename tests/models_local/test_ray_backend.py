"""`run.execution.backend: ray`: hf:/embed: models in Ray actors on a local 2-CPU Ray instance.

One instance for the module (`ray.init(num_cpus=2)`: starting one costs seconds). Every model is
compared with the same checkpoint loaded in this process: greedy decoding in float32 on CPU, so
texts must be identical and vectors equal to 1e-6. Each test closes its actors, so the next one
finds the instance's CPUs free.
"""

from __future__ import annotations

import asyncio

import pytest

ray = pytest.importorskip("ray")

from titjudge.cache.store import CallCache  # noqa: E402
from titjudge.models.base import GenerateRequest  # noqa: E402
from titjudge.models.execution import ExecutionOptions  # noqa: E402
from titjudge.models.hub import ModelHub  # noqa: E402
from titjudge.models.options import ModelOptions  # noqa: E402
from titjudge.models.ray_backend import RayEmbeddingBackend, RayTextBackend  # noqa: E402
from titjudge.models.registry import build_embedding_backend, build_text_backend  # noqa: E402

OPTIONS = ModelOptions(device="cpu", batch_size=4)


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def ray_execution(actors: int) -> ExecutionOptions:
    return ExecutionOptions(backend="ray", actors_per_model=actors, num_cpus_per_actor=1)


async def generate_all(backend, requests):
    return await asyncio.gather(*(backend.generate(r) for r in requests))


def test_describer_in_two_actors_writes_what_it_writes_in_process(vl_path, vl_backend, make_png):
    images = [make_png(56, 56, (200, 30 * i, 40)) for i in range(4)]
    requests = [
        GenerateRequest(prompt=f"Describe image {i}.", images=(images[i % 4],), max_tokens=12)
        for i in range(12)
    ]
    expected = asyncio.run(generate_all(vl_backend, requests))
    backend = build_text_backend(f"hf:{vl_path}", OPTIONS, execution=ray_execution(2))
    try:
        assert isinstance(backend, RayTextBackend)
        assert backend.capabilities == vl_backend.capabilities  # vision, from the actor's model
        got = asyncio.run(generate_all(backend, requests))
        assert [g.text for g in got] == [e.text for e in expected]
        assert [g.tokens_out for g in got] == [e.tokens_out for e in expected]
        facts = backend.describe()
        assert facts["kind"] == "vlm" and facts["execution"]["actors"] == 2
        assert facts["execution"]["cluster"] == "existing"  # this module's ray.init
        assert backend.pool.inflight == [0, 0]
    finally:
        asyncio.run(backend.aclose())


def test_judge_in_actors_survives_an_actor_killed_mid_run(
    qwen3_path, qwen3_backend, make_png, tmp_path
):
    requests = [
        GenerateRequest(prompt=f"Score item {i} from 1 to 10.", max_tokens=16) for i in range(40)
    ]
    expected = asyncio.run(generate_all(qwen3_backend, requests))
    hub = ModelHub(CallCache(tmp_path / "cache"), execution=ray_execution(2))
    options = OPTIONS.model_copy(update={"max_attempts": 4, "backoff_initial": 0.05})
    client = hub.text_client(f"hf:{qwen3_path}", options)

    async def run():
        await client.backend.ready()
        pool = client.backend.real.pool
        calls = [
            asyncio.ensure_future(client.text(r, role="judge", accept_truncated=True))
            for r in requests
        ]
        while pool.inflight[0] == 0:  # kill actor 0 while it holds calls
            await asyncio.sleep(0.001)
        ray.kill(pool.actors[0], no_restart=False)
        results = await asyncio.gather(*calls)
        # a model error inside an actor: its kind (permanent: not retried) and its message
        with_image = GenerateRequest(prompt="Score it.", images=(make_png(8, 8, (1, 2, 3)),))
        refused = await client.text(with_image, role="judge")
        return pool, results, refused

    try:
        pool, results, refused = asyncio.run(run())
        assert all(r.ok for r in results), [r.error for r in results if not r.ok]
        assert [r.value for r in results] == [e.text.strip() for e in expected]
        assert max(r.attempts for r in results) > 1  # some were retried after the kill
        assert pool.down_until[0] > 0 and pool.down_until[1] == 0
        assert not refused.ok and refused.attempts == 1
        assert refused.error == f"hf:{qwen3_path}: a text-only model cannot take images"
    finally:
        asyncio.run(hub.aclose())


def test_embedder_in_an_actor_gives_the_in_process_vectors(qwen3_embedding_path, qwen3_embedder):
    texts = ["a red cat on a mat", "two dogs", "a blue house by the sea", "x"]
    expected = asyncio.run(qwen3_embedder.embed(texts))
    backend = build_embedding_backend(
        f"embed:{qwen3_embedding_path}", OPTIONS, execution=ray_execution(1)
    )
    try:
        assert isinstance(backend, RayEmbeddingBackend)
        got = asyncio.run(backend.embed(texts))
        assert len(got) == len(expected)
        for row, want in zip(got, expected, strict=True):
            assert row == pytest.approx(want, abs=1e-6)
        assert backend.describe()["layout"] == "last-token"
    finally:
        asyncio.run(backend.aclose())
