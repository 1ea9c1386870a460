"""`run.execution`: its validation, the plan of a model bound for Ray actors, how a model error
inside an actor crosses back, and a run without Ray installed. No Ray instance is started here
(tests/models_local/test_ray_backend.py starts one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_process import run_cli
from ray_hidden import hide_ray

from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig
from titjudge.errors import ConfigError
from titjudge.models.core.base import (
    Capabilities,
    PermanentError,
    QuotaExhaustedError,
    TextBackend,
    TransientError,
)
from titjudge.models.core.execution import ExecutionOptions
from titjudge.models.core.lazy import BackendPlan, LazyBackend
from titjudge.models.core.options import ModelOptions
from titjudge.models.ray.backend import plan_in_actors
from titjudge.models.registry import build_text_backend
from titjudge.records.spec import parse_model_spec

BASE = {"name": "x", "describer": {"model": "replay:d.jsonl"}}


def test_ray_options_are_refused_without_backend_ray() -> None:
    config = {**BASE, "run": {"execution": {"address": "auto", "actors_per_model": 2}}}
    with pytest.raises(ConfigError, match="actors_per_model, address only apply with backend: ray"):
        validate_config(config, RunConfig, "test")
    with pytest.raises(ConfigError, match="run.execution.backend"):
        validate_config({**BASE, "run": {"execution": {"backend": "rai"}}}, RunConfig, "test")
    ok = validate_config(
        {**BASE, "run": {"execution": {"backend": "ray", "num_gpus_per_actor": 0.5}}},
        RunConfig,
        "test",
    )
    assert ok.run.execution.ray and ok.run.execution.num_gpus_per_actor == 0.5
    assert not validate_config(BASE, RunConfig, "test").run.execution.ray  # in-process default


def test_only_local_models_move_to_actors() -> None:
    ray = ExecutionOptions(backend="ray")
    assert ray.moves(parse_model_spec("hf:/m")) and ray.moves(parse_model_spec("embed:/m"))
    assert not ray.moves(parse_model_spec("litellm:openai/gpt-4o"))
    assert not ExecutionOptions().moves(parse_model_spec("hf:/m"))


def test_the_plan_in_actors_keeps_capabilities_and_keys_and_covers_every_actor() -> None:
    plan = BackendPlan(
        capabilities=Capabilities(vision=True, logprobs=True),
        default_concurrency=16,
        cache_facts={"thinking": {"enabled": False}},
        facts={"kind": "vlm"},
    )
    moved = plan_in_actors(plan, ExecutionOptions(backend="ray", actors_per_model=4))
    assert moved.capabilities == plan.capabilities and moved.cache_facts == plan.cache_facts
    assert moved.default_concurrency == 64
    assert moved.facts == {"kind": "vlm", "execution": "ray"}


def test_an_hf_model_for_ray_is_planned_like_in_process(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
    execution = ExecutionOptions(backend="ray")
    options = ModelOptions(batch_size=2)
    backend = build_text_backend(f"hf:{tmp_path}", options, lazy=True, execution=execution)
    in_process = build_text_backend(f"hf:{tmp_path}", options, lazy=True)
    assert isinstance(backend, LazyBackend) and not backend.built
    assert backend.capabilities == in_process.capabilities
    assert backend.cache_facts() == in_process.cache_facts()  # the same cache keys
    assert backend.describe()["execution"] == "ray"
    with pytest.raises(ConfigError, match="names one GPU"):
        build_text_backend(
            f"hf:{tmp_path}", ModelOptions(device="cuda:1"), lazy=True, execution=execution
        )


class _Backend(TextBackend):
    async def generate(self, request):  # pragma: no cover - never called
        raise NotImplementedError

    def classify_error(self, exc: BaseException) -> BaseException:
        if "memory" in str(exc):
            return PermanentError(f"out of accelerator memory: {exc}")
        return exc


def test_a_model_error_crosses_back_as_its_own_kind(monkeypatch) -> None:
    pytest.importorskip("ray")
    from titjudge.models.ray.actors import failure_of

    monkeypatch.setenv("SOME_API_KEY", "sk-secret-value-123456")
    backend = _Backend(parse_model_spec("hf:/m"))
    transient = failure_of(backend, TransientError("busy sk-secret-value-123456", retry_after=3))
    again = transient.error()
    assert isinstance(again, TransientError) and again.retry_after == 3
    assert "sk-secret-value-123456" not in str(again) and str(again).startswith("busy ")
    assert type(failure_of(backend, QuotaExhaustedError("spent")).error()) is QuotaExhaustedError
    # the backend's own classification applies in the actor, as the call layer would apply it
    oom = failure_of(backend, RuntimeError("CUDA out of memory")).error()
    assert type(oom) is PermanentError and str(oom).startswith("out of accelerator memory")
    # an unclassified error is not retried and names its type, as in the run's process
    other = failure_of(backend, ValueError("bad shape")).error()
    assert type(other) is PermanentError and str(other) == "ValueError: bad shape"


@pytest.mark.slow
def test_a_run_without_ray_installed_names_the_extra(synthetic, tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
    data = synthetic(2, 2)
    config = tmp_path / "run.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "noray",
                "data": {"manifest": str(data / "manifest.jsonl")},
                "describer": {"model": f"hf:{model}"},
                "run": {"execution": {"backend": "ray"}, "cache_dir": str(tmp_path / "c")},
            }
        )
    )
    # a warm child process where `import ray` fails (ray_hidden.py)
    done = run_cli(["run", str(config), "--out", str(tmp_path / "o")], timeout=120, before=hide_ray)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "Ray is not installed" in lines[0] and "[ray]" in lines[0]


class _FakeRay:
    """Records what the session asks of Ray (`ray.init` / `ray.shutdown`) and from which thread."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict, str]] = []
        self.up = False

    def is_initialized(self) -> bool:
        return self.up

    def init(self, address=None, **kwargs):
        import threading

        self.calls.append(("init", {"address": address, **kwargs}, threading.current_thread().name))
        self.up = True

    def shutdown(self):
        import threading

        self.calls.append(("shutdown", {}, threading.current_thread().name))
        self.up = False


@pytest.fixture
def fake_ray(monkeypatch):
    ray = pytest.importorskip("ray")
    fake = _FakeRay()
    for name in ("is_initialized", "init", "shutdown"):
        monkeypatch.setattr(ray, name, getattr(fake, name))
    return fake


def test_a_local_instance_is_started_quietly_by_a_keeper_thread_and_stopped(
    fake_ray, monkeypatch
) -> None:
    from titjudge.models.ray import session as ray_session

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert ray_session.connect(ExecutionOptions(backend="ray", num_cpus=2)) == "started"
    (init,) = fake_ray.calls
    assert init[1]["num_cpus"] == 2 and init[1]["address"] is None
    assert init[1]["log_to_driver"] is False and init[1]["include_dashboard"] is False
    assert init[2] == "titjudge-ray"  # Ray's processes live as long as that thread
    ray_session.release()
    assert fake_ray.calls[-1][0] == "shutdown" and fake_ray.calls[-1][2] == "titjudge-ray"


def test_ray_address_joins_the_cluster_and_release_leaves_it_running(fake_ray, monkeypatch) -> None:
    from titjudge.models.ray import session as ray_session

    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert ray_session.connect(ExecutionOptions(backend="ray")) == "existing"
    assert fake_ray.calls[0][1]["address"] == "auto"  # ray.init reads RAY_ADDRESS itself
    ray_session.release()
    assert [call[0] for call in fake_ray.calls] == ["init"]
    fake_ray.up = False
    assert ray_session.connect(ExecutionOptions(backend="ray", address="head:6379")) == "existing"
    assert fake_ray.calls[-1][1]["address"] == "head:6379"  # the config's address wins


def test_a_dumped_config_with_every_default_loads_again() -> None:
    from titjudge.config.load import dump_config

    config = validate_config(BASE, RunConfig, "test")
    again = validate_config(yaml.safe_load(dump_config(config)), RunConfig, "dumped")
    assert again.run.execution == config.run.execution
