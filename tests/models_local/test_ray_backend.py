"""`run.execution.backend: ray`: hf:/embed: models in Ray actors on a local 2-CPU Ray instance.

One instance for the module (`ray.init(num_cpus=2)`: starting one costs seconds). Every model is
compared with the same checkpoint loaded in this process: greedy decoding in float32 on CPU, so
texts must be identical and vectors equal to 1e-6. Each test closes its actors, so the next one
finds the instance's CPUs free.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
import yaml
from cli_process import run_cli
from ray_run_report import REPORT_ENV, report_after_main

ray = pytest.importorskip("ray")

from run_dirs import latest_run  # noqa: E402

import titjudge  # noqa: E402
from titjudge.cache.store import CallCache  # noqa: E402
from titjudge.models.calls.embedding_client import _vector_hit  # noqa: E402
from titjudge.models.calls.keys import embedding_key  # noqa: E402
from titjudge.models.core.base import GenerateRequest  # noqa: E402
from titjudge.models.core.clients import SEND  # noqa: E402
from titjudge.models.core.execution import ExecutionOptions  # noqa: E402
from titjudge.models.core.options import ModelOptions  # noqa: E402
from titjudge.models.hub import ModelHub  # noqa: E402
from titjudge.models.ray.backend import RayTextBackend  # noqa: E402
from titjudge.models.registry import build_text_backend  # noqa: E402
from titjudge.records.spec import parse_model_spec  # noqa: E402

pytestmark = pytest.mark.slow  # a local Ray instance, tiny models in actors, a child process

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


def test_describer_in_an_actor_writes_what_it_writes_in_process(vl_path, vl_backend, make_png):
    images = [make_png(56, 56, (200, 30 * i, 40)) for i in range(4)]
    requests = [
        GenerateRequest(prompt=f"Describe image {i}.", images=(images[i % 4],), max_tokens=12)
        for i in range(12)
    ]
    expected = asyncio.run(generate_all(vl_backend, requests))
    backend = build_text_backend(f"hf:{vl_path}", OPTIONS, execution=ray_execution(1))
    try:
        assert isinstance(backend, RayTextBackend)
        assert backend.capabilities == vl_backend.capabilities  # vision, from the actor's model
        got = asyncio.run(generate_all(backend, requests))
        assert [g.text for g in got] == [e.text for e in expected]
        assert [g.tokens_out for g in got] == [e.tokens_out for e in expected]
        facts = backend.describe()
        assert facts["kind"] == "vlm" and facts["execution"]["actors"] == 1
        assert facts["execution"]["cluster"] == "existing"  # this module's ray.init
    finally:
        asyncio.run(backend.aclose())


def test_judge_in_actors_survives_an_actor_killed_mid_run(
    qwen3_path, qwen3_backend, make_png, tmp_path
):
    requests = [
        GenerateRequest(prompt=f"Score item {i} from 1 to 10.", max_tokens=16) for i in range(20)
    ]
    expected = asyncio.run(generate_all(qwen3_backend, requests))
    hub = ModelHub(CallCache(tmp_path / "cache"), execution=ray_execution(2))
    options = OPTIONS.model_copy(update={"max_attempts": 4, "backoff_initial": 0.05})
    client = hub.text_client(f"hf:{qwen3_path}", options)

    async def run():
        await client.backend.ready()
        pool = client.backend.real.pool
        calls = [
            asyncio.ensure_future(client.text(r, role="judge", accept_truncated=True, probe=SEND))
            for r in requests
        ]
        while pool.inflight[0] == 0:  # kill actor 0 while it holds calls
            await asyncio.sleep(0.001)
        ray.kill(pool.actors[0])  # for good: its calls must be retried on the other one
        results = await asyncio.gather(*calls)
        # a model error inside an actor: its kind (permanent: not retried) and its message
        with_image = GenerateRequest(prompt="Score it.", images=(make_png(8, 8, (1, 2, 3)),))
        refused = await client.text(with_image, role="judge", probe=SEND)
        return pool, results, refused

    try:
        pool, results, refused = asyncio.run(run())
        assert all(r.ok for r in results), [r.error for r in results if not r.ok]
        assert [r.value for r in results] == [e.text.strip() for e in expected]
        assert max(r.attempts for r in results) > 1  # some were retried after the kill
        assert pool.down_until[0] > 0 and pool.down_until[1] == 0  # actor 0 is passed over
        assert sum(pool.served) == len(requests) + 1 and pool.served[1] > pool.served[0]
        assert not refused.ok and refused.attempts == 1
        assert refused.error == f"hf:{qwen3_path}: a text-only model cannot take images"
    finally:
        asyncio.run(hub.aclose())


def run_config(data: Path, model: str, tmp_path: Path, execution: dict | None) -> dict:
    return {
        "name": "ray" if execution else "process",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": f"replay:{data / 'descriptions.jsonl'}"},
        "judges": [{"name": "emb", "kind": "embedding", "model": model, "device": "cpu"}],
        "run": {
            "cache_dir": str(tmp_path / "cache"),
            "out": str(tmp_path / "runs"),
            **({"execution": execution} if execution else {}),
        },
    }


def item_scores(out: Path) -> dict[str, float]:
    lines = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    return {line["item_id"]: line["score"] for line in lines if line["variant"] == "emb"}


def test_a_run_reaches_an_existing_cluster_through_ray_address(
    ray_instance, qwen3_embedding_path, qwen3_embedder, synthetic, tmp_path
):
    """A second driver process (the `titjudge` run, a warm child process: see
    ray_run_report.py) joins this module's instance through RAY_ADDRESS, loads no torch
    itself, caches the vectors the model gives in this process, scores as an in-process run
    does, and leaves the cluster running when it ends."""
    data = synthetic(2, 2)
    model = f"embed:{qwen3_embedding_path}"
    in_ray = run_config(data, model, tmp_path / "ray", {"backend": "ray"})
    config = tmp_path / "ray.yaml"
    config.write_text(yaml.safe_dump(in_ray))
    report_path = tmp_path / "report.json"
    env = {**os.environ, "RAY_ADDRESS": ray_instance, REPORT_ENV: str(report_path)}
    done = run_cli(
        ["run", str(config), "--limit", "4"], env=env, timeout=240, before=report_after_main
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(report_path.read_text())
    assert report["preloaded"] == []  # the child started without torch, transformers or ray
    assert report["heavy"] == []  # the weights, torch and transformers stayed in the actor
    out = latest_run(tmp_path / "ray" / "runs" / "ray")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["variants"]["emb"]["ok"] == 4
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    (facts,) = [m for m in resolved["resolved"]["models"] if m["backend"] == "embed"]
    assert facts["execution"]["cluster"] == "existing" and facts["execution"]["actors"] == 1
    assert ray.is_initialized() and ray.get(ray.put(1)) == 1  # the run did not stop it

    # the vectors the actor computed, as the run cached them, are the in-process ones
    lines = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    prompts = {
        row["item_id"]: row["prompt"]
        for row in map(json.loads, (data / "manifest.jsonl").read_text().splitlines())
    }
    texts = sorted({t for line in lines for t in (prompts[line["item_id"]], line["description"])})
    cache = CallCache(tmp_path / "ray" / "cache")
    cached = [cache.peek(embedding_key(parse_model_spec(model), text)) for text in texts]
    cache.close()
    for row, want in zip(cached, asyncio.run(qwen3_embedder.embed(texts)), strict=True):
        hit = _vector_hit(row)  # the cache entry as the embedding client reads it
        assert hit is not None and hit.value == pytest.approx(want, abs=1e-6)

    in_process = titjudge.evaluate(run_config(data, model, tmp_path / "process", None), limit=4)
    expected = item_scores(in_process.run_dir)
    got = item_scores(out)
    assert got.keys() == expected.keys()
    for item, score in expected.items():
        # scores.csv rounds to 6 decimals: vectors within 1e-6 (checked above) can round a
        # score one unit apart (0.743634 and 0.743635 in one CI run)
        assert got[item] == pytest.approx(score, abs=2.5e-6)
