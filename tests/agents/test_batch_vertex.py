"""`batch: true` on `litellm:vertex_ai/...` Gemini models: a run's calls go through Vertex AI
batch prediction (a loopback double of Cloud Storage, batchPredictionJobs and Google's token
endpoint, `doubles.vertex_batch_server`), durably, at batch price.

litellm's `vertex_ai/` provider authenticates through google-auth (a service-account key
whose `token_uri` is the double's), as every Vertex call does: the `vertex` extra (in `dev`)
installs it."""

import functools
import json
import signal
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from batch_helpers import N_ITEMS, batch_env, online_reruns, run_ok
from batch_helpers import ledger_text as _ledger_text
from batch_helpers import summary as _summary
from batch_helpers import wait_for as _wait
from batch_helpers import write_config as _write
from builders import run_config
from cli_process import start_cli
from doubles.server import build_responder
from doubles.vertex_batch_server import Plan, VertexBatchServer
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main

DESCRIBER = "litellm:vertex_ai/gemini-2.0-flash"
JUDGE = "litellm:vertex_ai/gemini-2.0-flash-lite"
BUCKET = "tj-batch-bucket/runs"


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


@functools.cache
def _private_key_pem() -> str:
    """A throwaway RSA key for the service account (one per session: making one costs
    CPU, and no test depends on which), made with what google-auth signs with:
    cryptography (newer google-auth releases require it), else python-rsa (older ones, such
    as 2.29, the lowest the [vertex] extra allows)."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError:
        import rsa as python_rsa

        _, private = python_rsa.newkeys(2048)
        return private.save_pkcs1().decode()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@contextmanager
def _vertex(data, directory):
    """The double, and a service-account key file whose token_uri is the double's."""
    responder = build_responder("auto", descriptions=stored_descriptions(data))
    with VertexBatchServer(responder) as found, pytest.MonkeyPatch.context() as patch:
        account = {
            "type": "service_account",
            "project_id": "tj-project",
            "private_key_id": "k1",
            "private_key": _private_key_pem(),
            "client_email": "titjudge@tj-project.iam.gserviceaccount.com",
            "client_id": "1",
            "token_uri": found.token_uri,
        }
        path = directory / "service-account.json"
        path.write_text(json.dumps(account))
        patch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        patch.setenv("VERTEXAI_PROJECT", "tj-project")
        patch.setenv("VERTEXAI_LOCATION", "us-central1")
        yield found


@pytest.fixture
def server(batch_data, tmp_path):
    with _vertex(batch_data, tmp_path) as found:
        yield found


def _config(data, url, tmp_path, batch=True, bucket=BUCKET):
    config = run_config(
        data, tmp_path, url=url, describer_model=DESCRIBER, judge_model=JUDGE, batch=batch
    )
    if bucket:
        for section in (config["describer"], config["judges"][0]):
            section["params"] = {"gcs_bucket_name": bucket}
    return config


def _items(tmp_path) -> str:
    return (latest_run(tmp_path / "runs" / "e2e") / "items.jsonl").read_text()


def _seen(server, tmp_path) -> SimpleNamespace:
    """What the double counted so far, and the latest run's summary under `tmp_path`."""
    return SimpleNamespace(
        online=server.online,
        creates=server.batch_creates,
        lines=server.lines_answered,
        objects=set(server.objects),
        summary=_summary(tmp_path),
        ledgers=list((tmp_path / "cache" / "batches").glob("*.json")),
    )


@pytest.fixture(scope="module")
def runs(batch_data, tmp_path_factory):
    """The config run three times against one double: as batch jobs; online on that cache;
    online on a cache of its own."""
    tmp = tmp_path_factory.mktemp("vertex-runs")
    with _vertex(batch_data, tmp) as server:
        run_ok(_config(batch_data, server.url, tmp / "batch"), tmp)
        batch = _seen(server, tmp / "batch")
        reran, online = online_reruns(
            lambda out, batch: _config(batch_data, server.url, out, batch=batch),
            tmp,
            lambda out: _seen(server, out),
        )
        return SimpleNamespace(
            batch=batch,
            rerun=reran,
            online=online,
            online_bodies=sorted(server.online_bodies),
            batch_bodies=sorted(server.batch_bodies),
        )


@pytest.mark.slow
def test_a_vertex_batch_run_answers_every_item_and_an_online_rerun_is_cached(runs):
    batch = runs.batch
    assert batch.online == 0  # nothing online: every call went as a batch line
    assert batch.creates == 2  # describe first, then the judge
    assert batch.lines == 2 * N_ITEMS
    # each line's input and output files live in the configured bucket, under its prefix
    assert {b for b, _ in batch.objects} == {"tj-batch-bucket"}
    assert all(name.startswith("runs/titjudge-batch/") for _, name in batch.objects)
    summary = batch.summary
    assert summary["failed_items"] == 0
    assert summary["batch"][DESCRIBER]["answered"] == N_ITEMS
    assert summary["batch"][JUDGE]["requests"] == N_ITEMS
    assert summary["usage"]["describer"]["cache_hits"] == 0
    assert batch.ledgers == []

    assert runs.rerun.online == 0 and runs.rerun.creates == 2
    assert runs.rerun.summary["usage"]["describer"]["cache_hits"] == N_ITEMS


@pytest.mark.slow
def test_each_line_is_the_online_body_and_costs_half(runs):
    """The request in each line is litellm's online body (plus the label carrying its id),
    and it costs litellm's batch rates: gemini-2.0-flash's are half its list price."""
    assert runs.online.online == 2 * N_ITEMS and len(runs.batch_bodies) == 2 * N_ITEMS
    assert runs.batch_bodies == runs.online_bodies
    for role in ("describer", "judge"):
        online = runs.online.summary["usage"][role]
        batch = runs.batch.summary["usage"][role]
        assert batch["tokens_in"] == online["tokens_in"] > 0
        assert batch["cost"] == pytest.approx(online["cost"] / 2, rel=1e-6)


@pytest.mark.slow
def test_a_failed_line_is_a_failure_record_with_its_status(batch_data, tmp_path, server):
    reason = 'Bad Request: {"error": {"code": 400, "message": "Unable to process input image."}}'
    server.plan(Plan(fail={0: reason}))
    config = _config(batch_data, server.url, tmp_path)
    assert main(["run", _write(config, tmp_path)]) == 1
    assert server.online == 0
    summary = _summary(tmp_path)
    assert summary["describer_failures"] == 1
    assert summary["batch"][DESCRIBER]["failed"] == 1
    assert "Unable to process input image." in _items(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("end", ["cancelled", "expired"])
def test_a_job_that_ends_early_sends_its_unrun_lines_again(batch_data, tmp_path, server, end):
    server.plan(Plan(end=end, run=5))
    config = _config(batch_data, server.url, tmp_path)
    assert main(["run", _write(config, tmp_path)]) == 0
    # describer: the job that ended and one for its 3 lines never run; then the judge's
    assert server.batch_creates == 3
    assert server.lines_answered == 2 * N_ITEMS
    assert server.online == 0
    assert _summary(tmp_path)["failed_items"] == 0


def test_vertex_batch_without_a_bucket_is_refused_at_load(batch_data, tmp_path, capsys):
    config = _config(batch_data, "http://127.0.0.1:9", tmp_path)
    del config["describer"]["params"]  # the judge's section names its bucket
    assert main(["run", _write(config, tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "gcs_bucket_name" in line]
    assert len(lines) == 1 and "Cloud Storage bucket" in lines[0] and DESCRIBER in lines[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", ["created", "creating"])
def test_killed_after_submission_resumes_its_job(batch_data, tmp_path, server, capsys, kill_at):
    """kill -9 once the job is created (or while its creation is in flight, before the
    ledger records its id): the re-run finds the job by its label, creates nothing twice.
    The killed run is a process of its own; the re-run, after it is gone, is the CLI's main
    here."""
    server.hold()
    path = _write(_config(batch_data, server.url, tmp_path), tmp_path)
    proc = start_cli(["run", path])
    ledger = tmp_path / "cache" / "batches"
    if kill_at == "created":
        _wait(lambda: '"state": "submitted"' in _ledger_text(ledger), proc)
    else:
        _wait(lambda: server.batch_creates == 1, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    if kill_at == "creating":  # as if killed before the job's name was recorded
        (file,) = ledger.glob("*.json")
        raw = json.loads(file.read_text())
        for job in raw["jobs"]:
            job["state"], job["job_id"] = "creating", None
        file.write_text(json.dumps(raw))
    assert server.batch_creates == 1
    server.release()
    capsys.readouterr()
    code = main(["run", path])
    err = capsys.readouterr().err
    assert code == 0, err
    # the describer's job was polled again, never created again; then the judge's
    assert server.batch_creates == 2
    assert server.lines_answered == 2 * N_ITEMS and server.online == 0
    assert _summary(tmp_path)["failed_items"] == 0
