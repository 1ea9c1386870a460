"""`batch: true` on `litellm:vertex_ai/...` Gemini models: a run's calls go through Vertex AI
batch prediction (a loopback double of Cloud Storage, batchPredictionJobs and Google's token
endpoint, `doubles.vertex_batch_server`), durably, at batch price.

litellm's `vertex_ai/` provider authenticates through google-auth (a service-account key
whose `token_uri` is the double's), as every Vertex call does: the `vertex` extra (in `dev`)
installs it."""

import json
import signal

import pytest
from batch_helpers import ledger_text as _ledger_text
from batch_helpers import summary as _summary
from batch_helpers import wait_for as _wait
from batch_helpers import write_config as _write
from cli_process import run_cli, start_cli
from doubles.server import build_responder
from doubles.vertex_batch_server import Plan, VertexBatchServer
from pipeline_helpers import api_config, stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main

N_ITEMS = 16
DESCRIBER = "litellm:vertex_ai/gemini-2.0-flash"
JUDGE = "litellm:vertex_ai/gemini-2.0-flash-lite"
BUCKET = "tj-batch-bucket/runs"


def _private_key_pem() -> str:
    """A throwaway RSA key for the service account, made with what google-auth signs with:
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


@pytest.fixture
def server(synth_data, tmp_path, monkeypatch):
    """The double, and a service-account key file whose token_uri is the double's."""
    responder = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with VertexBatchServer(responder) as found:
        pem = _private_key_pem()
        account = {
            "type": "service_account",
            "project_id": "tj-project",
            "private_key_id": "k1",
            "private_key": pem,
            "client_email": "titjudge@tj-project.iam.gserviceaccount.com",
            "client_id": "1",
            "token_uri": found.token_uri,
        }
        path = tmp_path / "service-account.json"
        path.write_text(json.dumps(account))
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        monkeypatch.setenv("VERTEXAI_PROJECT", "tj-project")
        monkeypatch.setenv("VERTEXAI_LOCATION", "us-central1")
        yield found


def _config(data, url, tmp_path, batch=True, bucket=BUCKET):
    config = api_config(data, url, tmp_path)
    config["describer"]["model"], config["judges"][0]["model"] = DESCRIBER, JUDGE
    for section in (config["describer"], config["judges"][0]):
        section["batch"] = batch
        section["batch_poll"] = 0.05
        if bucket:
            section["params"] = {"gcs_bucket_name": bucket}
    return config


def _items(tmp_path) -> str:
    return (latest_run(tmp_path / "runs" / "e2e") / "items.jsonl").read_text()


def test_a_vertex_batch_run_answers_every_item_and_an_online_rerun_is_cached(
    synth_data, tmp_path, server
):
    config = _config(synth_data, server.url, tmp_path)
    assert main(["run", _write(config, tmp_path)]) == 0
    assert server.online == 0  # nothing online: every call went as a batch line
    assert server.batch_creates == 2  # describe first, then the judge
    assert server.lines_answered == 2 * N_ITEMS
    # each line's input and output files live in the configured bucket, under its prefix
    assert {b for b, _ in server.objects} == {"tj-batch-bucket"}
    assert all(name.startswith("runs/titjudge-batch/") for _, name in server.objects)
    summary = _summary(tmp_path)
    assert summary["failed_items"] == 0
    assert summary["batch"][DESCRIBER]["answered"] == N_ITEMS
    assert summary["batch"][JUDGE]["requests"] == N_ITEMS
    assert summary["usage"]["describer"]["cache_hits"] == 0
    assert not list((tmp_path / "cache" / "batches").glob("*.json"))

    for section in (config["describer"], config["judges"][0]):
        section["batch"] = False
    assert main(["run", _write(config, tmp_path)]) == 0
    assert server.online == 0 and server.batch_creates == 2
    assert _summary(tmp_path)["usage"]["describer"]["cache_hits"] == N_ITEMS


def test_each_line_is_the_online_body_and_costs_half(synth_data, tmp_path, server):
    """The request in each line is litellm's online body (plus the label carrying its id),
    and it costs litellm's batch rates: gemini-2.0-flash's are half its list price."""
    spent = {}
    for mode in ("online", "batch"):
        config = _config(synth_data, server.url, tmp_path / mode, batch=mode == "batch")
        assert main(["run", _write(config, tmp_path)]) == 0
        usage = _summary(tmp_path / mode)["usage"]
        spent[mode] = {role: usage[role] for role in ("describer", "judge")}
    assert server.online == 2 * N_ITEMS and len(server.batch_bodies) == 2 * N_ITEMS
    assert sorted(server.batch_bodies) == sorted(server.online_bodies)
    for role in ("describer", "judge"):
        online, batch = spent["online"][role], spent["batch"][role]
        assert batch["tokens_in"] == online["tokens_in"] > 0
        assert batch["cost"] == pytest.approx(online["cost"] / 2, rel=1e-6)


def test_a_failed_line_is_a_failure_record_with_its_status(synth_data, tmp_path, server):
    reason = 'Bad Request: {"error": {"code": 400, "message": "Unable to process input image."}}'
    server.plan(Plan(fail={0: reason}))
    config = _config(synth_data, server.url, tmp_path)
    assert main(["run", _write(config, tmp_path)]) == 1
    assert server.online == 0
    summary = _summary(tmp_path)
    assert summary["describer_failures"] == 1
    assert summary["batch"][DESCRIBER]["failed"] == 1
    assert "Unable to process input image." in _items(tmp_path)


@pytest.mark.parametrize("end", ["cancelled", "expired"])
def test_a_job_that_ends_early_sends_its_unrun_lines_again(synth_data, tmp_path, server, end):
    server.plan(Plan(end=end, run=5))
    config = _config(synth_data, server.url, tmp_path)
    assert main(["run", _write(config, tmp_path)]) == 0
    # describer: the job that ended and one for its 11 lines never run; then the judge's
    assert server.batch_creates == 3
    assert server.lines_answered == 2 * N_ITEMS
    assert server.online == 0
    assert _summary(tmp_path)["failed_items"] == 0


def test_vertex_batch_without_a_bucket_is_refused_at_load(synth_data, tmp_path, capsys):
    config = _config(synth_data, "http://127.0.0.1:9", tmp_path)
    del config["describer"]["params"]  # the judge's section names its bucket
    assert main(["run", _write(config, tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "gcs_bucket_name" in line]
    assert len(lines) == 1 and "Cloud Storage bucket" in lines[0] and DESCRIBER in lines[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("kill_at", ["created", "creating"])
def test_killed_after_submission_resumes_its_job(synth_data, tmp_path, server, kill_at):
    """kill -9 once the job is created (or while its creation is in flight, before the
    ledger records its id): the re-run finds the job by its label, creates nothing twice."""
    server.hold()
    path = _write(_config(synth_data, server.url, tmp_path), tmp_path)
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
    resumed = run_cli(["run", path], timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    # the describer's job was polled again, never created again; then the judge's
    assert server.batch_creates == 2
    assert server.lines_answered == 2 * N_ITEMS and server.online == 0
    assert _summary(tmp_path)["failed_items"] == 0
