"""`batch: true` on `litellm:azure/<deployment>` models: a run's calls go through Azure
OpenAI's global batch API (a loopback double of its `/openai/files`, `/openai/batches` and
deployment endpoints, `doubles.azure_batch_server`), with the configured api-version and the
`api-key` header on every request, at batch price, durably."""

import json
import os
import signal
from types import SimpleNamespace

import pytest
from batch_helpers import N_ITEMS, batch_env, online_reruns, run_ok
from batch_helpers import forget_job_id as _forget_job_id
from batch_helpers import ledger_text as _ledger_text
from batch_helpers import run_dir as _run_dir
from batch_helpers import summary as _summary
from batch_helpers import wait_for as _wait
from batch_helpers import write_config as _write
from builders import run_config
from cli_process import start_cli
from doubles.azure_batch_server import API_VERSIONS, AZURE_KEY, FILTERED, AzureBatchServer
from doubles.batch_server import Plan
from doubles.server import build_responder
from pipeline_helpers import stored_descriptions

from titjudge.cli import main

#: not litellm's default api-version (2025-02-01-preview): one the config must carry through
VERSION = "2024-10-21"
KEY_ENV = "TITJUDGE_TEST_AZURE_KEY"
DEPLOYMENTS = {
    "vlm-batch": "GlobalBatch",
    "judge-batch": "GlobalBatch",
    "gpt-4o-mini": "GlobalBatch",
}


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


@pytest.fixture(autouse=True)
def azure_env(monkeypatch):
    """The key in a variable of the config's own naming; no AZURE_* variable to fall back on,
    so the api-version is the config's alone."""
    for name in ("AZURE_API_KEY", "AZURE_API_BASE", "AZURE_API_VERSION", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, AZURE_KEY)


def _config(data, server, tmp_path, *, batch=True, describer="vlm-batch", judge="judge-batch"):
    config = run_config(
        data,
        tmp_path,
        url=server.endpoint,
        describer_model=f"litellm:azure/{describer}",
        judge_model=f"litellm:azure/{judge}",
        batch=batch,
    )
    for section in (config["describer"], config["judges"][0]):
        section["api_key_env"] = KEY_ENV
        section["params"] = {"api_version": VERSION}
    return config


def _server(data, deployments=None) -> AzureBatchServer:
    responder = build_responder("auto", descriptions=stored_descriptions(data))
    return AzureBatchServer(responder=responder, deployments=deployments or DEPLOYMENTS)


def _items(tmp_path) -> str:
    return (_run_dir(tmp_path) / "items.jsonl").read_text()


def _priced(data, server, tmp_path, batch):
    """A describer deployment of a model litellm prices (gpt-4o-mini) and a judge one of a
    model it does not, with a `price`."""
    config = _config(data, server, tmp_path, batch=batch, describer="gpt-4o-mini")
    config["judges"][0]["price"] = {"input": 1.0, "output": 2.0}
    return config


def _seen(server, tmp_path) -> SimpleNamespace:
    """What the double saw so far, and the latest run's record under `tmp_path`."""
    return SimpleNamespace(
        online=server.stats.total,
        creates=server.batch_creates,
        lines=server.lines_answered,
        seen=list(server.seen),
        summary=_summary(tmp_path),
        scores=(_run_dir(tmp_path) / "scores.csv").read_text(),
    )


@pytest.fixture(scope="module")
def runs(batch_data, tmp_path_factory):
    """The priced config run three times against one double: as batch jobs; online on that
    cache; online on a cache of its own."""
    tmp = tmp_path_factory.mktemp("azure-runs")
    with _server(batch_data) as server, pytest.MonkeyPatch.context() as patch:
        for name in (
            "AZURE_API_KEY",
            "AZURE_API_BASE",
            "AZURE_API_VERSION",
            "AZURE_OPENAI_API_KEY",
        ):
            patch.delenv(name, raising=False)
        patch.setenv(KEY_ENV, AZURE_KEY)
        run_ok(_priced(batch_data, server, tmp / "batch", batch=True), tmp)
        batched = _seen(server, tmp / "batch")
        inputs = [
            (b["endpoint"], server.contents[b["input_file_id"]].decode().splitlines())
            for b in server.batches.values()
        ]
        tags = [b["metadata"]["titjudge_job"] for b in server.batches.values()]
        reran, online = online_reruns(
            lambda out, batch: _priced(batch_data, server, out, batch=batch),
            tmp,
            lambda out: _seen(server, out),
        )
        return SimpleNamespace(
            batch=batched,
            inputs=inputs,
            tags=tags,
            rerun=reran,
            online=online,
            online_bodies=sorted(r.body_hash for r in server.stats.records),
            batch_bodies=sorted(r.body_hash for r in server.engine.stats.records),
        )


@pytest.mark.slow
def test_azure_batch_answers_every_item_with_the_configured_api_version(runs):
    assert VERSION in API_VERSIONS
    batch = runs.batch
    assert batch.online == 0  # nothing online: every call was a batch line
    assert batch.creates == 2 and batch.lines == 2 * N_ITEMS
    # every request reached Azure's own paths with the config's api-version and the key
    paths = {(method, path.split("/")[2]) for method, path, _, _ in batch.seen}
    assert paths == {
        ("POST", "files"),
        ("POST", "batches"),
        ("GET", "batches"),
        ("GET", "files"),
    }
    assert {(version, keyed) for _, _, version, keyed in batch.seen} == {(VERSION, True)}
    # each line names its deployment, which Azure checks against the file's
    for endpoint, rows in runs.inputs:
        models = {json.loads(r)["body"]["model"] for r in rows}
        assert endpoint == "/chat/completions" and len(models) == 1
        assert {json.loads(r)["url"] for r in rows} == {"/chat/completions"}
    assert len(runs.tags) == 2 and all(runs.tags)
    summary = batch.summary
    assert summary["failed_items"] == 0
    assert summary["batch"]["litellm:azure/gpt-4o-mini"]["answered"] == N_ITEMS
    assert summary["batch"]["litellm:azure/judge-batch"]["answered"] == N_ITEMS

    # online: the same cache keys, so every answer is a hit and nothing is sent
    assert runs.rerun.online == 0 and runs.rerun.creates == 2
    assert runs.rerun.summary["usage"]["describer"]["cache_hits"] == N_ITEMS
    assert runs.rerun.scores == batch.scores


@pytest.mark.slow
def test_azure_lines_are_the_online_bodies_at_half_the_price(runs):
    """Online, the deployment's chat URL gets each body; the batch lines carry the very same
    bodies, and cost litellm's batch rates for the deployment's model (azure/gpt-4o-mini)."""
    online_paths = {path for _, path, _, _ in runs.online.seen if "/deployments/" in path}
    assert online_paths == {
        "/openai/deployments/gpt-4o-mini/chat/completions",
        "/openai/deployments/judge-batch/chat/completions",
    }
    assert runs.online.online == 2 * N_ITEMS
    assert len(runs.batch_bodies) == 2 * N_ITEMS and runs.batch_bodies == runs.online_bodies
    for role in ("describer", "judge"):
        online = runs.online.summary["usage"][role]
        batch = runs.batch.summary["usage"][role]
        assert batch["tokens_in"] == online["tokens_in"] > 0
        assert online["cost"] > 0
        assert batch["cost"] == pytest.approx(online["cost"] / 2, rel=1e-6)


@pytest.mark.slow
def test_a_filtered_line_is_a_failure_record_with_azures_reason(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan(fail={3: FILTERED}))
        assert main(["run", _write(_config(batch_data, server, tmp_path), tmp_path)]) == 1
        assert server.stats.total == 0
    summary = _summary(tmp_path)
    assert summary["describer_failures"] == 1
    assert summary["batch"]["litellm:azure/vlm-batch"]["failed"] == 1
    failed = [r for r in map(json.loads, _items(tmp_path).splitlines()) if r["status"] != "ok"]
    assert len({r["item_id"] for r in failed}) == 1  # the one item: its describer's line
    assert all(FILTERED in r["error"] and "HTTP 400 content_filter" in r["error"] for r in failed)


@pytest.mark.slow
def test_a_job_azure_refuses_at_validation_fails_its_lines_with_the_code(batch_data, tmp_path):
    """A deployment that is not a Global Batch one: Azure fails the job at validation
    (`invalid_request`); each of its requests is a failure record naming Azure's reason, at
    once: the same file would be refused again, so no second job is created."""
    deployments = {**DEPLOYMENTS, "vlm-standard": "GlobalStandard"}
    with _server(batch_data, deployments) as server:
        config = _config(batch_data, server, tmp_path, describer="vlm-standard")
        assert main(["run", _write(config, tmp_path)]) == 1
        assert server.stats.total == 0 and server.lines_answered == 0
        # a file refused at validation is refused again: it is not sent a second time
        assert server.batch_creates == 1
    assert _summary(tmp_path)["describer_failures"] == N_ITEMS
    assert "invalid_request: The deployment 'vlm-standard' is not a Global Batch" in _items(
        tmp_path
    )


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", ["created", "creating"])
def test_killed_azure_run_resumes_its_job(batch_data, tmp_path, capsys, kill_at):
    """kill -9 once the job is created (or while its creation is in flight, before the ledger
    records its id): the re-run finds the job (by its metadata tag), polls it, submits nothing
    twice. The killed run is a process of its own; the re-run, after it is gone, is the CLI's
    main here (azure_env gives it the same key)."""
    with _server(batch_data) as server:
        server.hold()
        path = _write(_config(batch_data, server, tmp_path), tmp_path)
        env = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_")}
        proc = start_cli(["run", path], env={**env, KEY_ENV: AZURE_KEY})
        ledger = tmp_path / "cache" / "batches"
        if kill_at == "created":
            _wait(lambda: '"state": "submitted"' in _ledger_text(ledger), proc)
        else:
            _wait(lambda: server.batch_creates == 1, proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        if kill_at == "creating":
            _forget_job_id(ledger)
        server.release()
        capsys.readouterr()
        code = main(["run", path])
        err = capsys.readouterr().err
        assert code == 0, err
        assert server.batch_creates == 2  # the describer's job resumed, then the judges'
        assert server.lines_answered == 2 * N_ITEMS and server.stats.total == 0
    assert _summary(tmp_path)["failed_items"] == 0
