"""`batch: true`: a run's calls to an OpenAI model go through OpenAI's Batch API (a loopback
double of its files and batches endpoints, `doubles.batch_server`), durably, at batch price."""

import json
import os
import signal
from types import SimpleNamespace

import pytest
from batch_helpers import N_ITEMS, batch_env, jobs_by_model, online_reruns, run_ok
from batch_helpers import forget_job_id as _forget_job_id
from batch_helpers import ledger_text as _ledger_text
from batch_helpers import summary as _summary
from batch_helpers import wait_for as _wait
from batch_helpers import write_config as _write
from builders import run_config
from cli_process import start_cli
from doubles.batch_server import BatchServer, Plan
from doubles.server import build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


def _config(data, url, tmp_path, **run):
    return run_config(data, tmp_path, url=url, batch=True, **run)


def _priced(data, url, tmp_path, batch):
    """A describer litellm prices (gpt-4o-mini) and a judge it does not, with a `price`."""
    config = _config(data, url, tmp_path)
    config["describer"]["model"] = "litellm:openai/gpt-4o-mini"
    config["judges"][0]["price"] = {"input": 1.0, "output": 2.0}
    for section in (config["describer"], config["judges"][0]):
        section["batch"] = batch
    return config


def _server(data) -> BatchServer:
    return BatchServer(responder=build_responder("auto", descriptions=stored_descriptions(data)))


def _scores(tmp_path) -> str:
    return (latest_run(tmp_path / "runs" / "e2e") / "scores.csv").read_text()


def _seen(server, tmp_path) -> SimpleNamespace:
    """What the double counted so far, and the latest run's record under `tmp_path`."""
    return SimpleNamespace(
        online=server.stats.total,
        creates=server.batch_creates,
        lines=server.lines_answered,
        summary=_summary(tmp_path),
        scores=_scores(tmp_path),
        ledgers=list((tmp_path / "cache" / "batches").glob("*.json")),
    )


@pytest.fixture(scope="module")
def priced_runs(batch_data, tmp_path_factory):
    """The priced config (`_priced`) run three times against one double: as batch jobs; then
    online on the batch run's cache; then online on a cache of its own."""
    tmp = tmp_path_factory.mktemp("priced")
    with pytest.MonkeyPatch.context() as patch, _server(batch_data) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        run_ok(_priced(batch_data, server.url, tmp / "batch", batch=True), tmp)
        batched = _seen(server, tmp / "batch")
        reran, online = online_reruns(
            lambda out, batch: _priced(batch_data, server.url, out, batch=batch),
            tmp,
            lambda out: _seen(server, out),
        )
        return SimpleNamespace(
            batch=batched,
            rerun=reran,
            online=online,
            online_bodies=sorted(r.body_hash for r in server.stats.records),
            batch_bodies=sorted(r.body_hash for r in server.engine.stats.records),
        )


@pytest.mark.slow
def test_batch_run_answers_every_item_and_an_online_rerun_is_cached(priced_runs):
    batch = priced_runs.batch
    assert batch.online == 0  # nothing online: every call went as a batch line
    # describe first, then judges (they read the descriptions): one job each
    assert batch.creates == 2
    assert batch.lines == 2 * N_ITEMS
    summary = batch.summary
    assert summary["failed_items"] == 0
    assert summary["batch"]["litellm:openai/gpt-4o-mini"]["answered"] == N_ITEMS
    assert summary["batch"]["litellm:openai/judge"]["requests"] == N_ITEMS
    assert "batch" in summary["batch"]["litellm:openai/judge"]["price"]
    assert summary["usage"]["describer"]["calls"] == N_ITEMS
    assert summary["usage"]["describer"]["cache_hits"] == 0
    # the ledger is gone once its answers are used
    assert batch.ledgers == []

    # the same config online: the same cache keys, so every answer is cached
    rerun = priced_runs.rerun
    assert rerun.online == 0 and rerun.creates == 2
    assert rerun.summary["usage"]["describer"]["cache_hits"] == N_ITEMS
    assert rerun.scores == batch.scores


@pytest.mark.slow
def test_same_bodies_and_spend_at_the_batch_price(priced_runs):
    """Each line's body is the online call's body, and it costs litellm's batch rates for a model it prices (gpt-4o-mini: half its list price), and
    half the `price` option of one it does not: half what the same calls cost online."""
    # each batch line's body is the very body the online call sent
    assert priced_runs.online.online == 2 * N_ITEMS
    assert len(priced_runs.batch_bodies) == 2 * N_ITEMS
    assert priced_runs.batch_bodies == priced_runs.online_bodies
    for role in ("describer", "judge"):
        online = priced_runs.online.summary["usage"][role]
        batch = priced_runs.batch.summary["usage"][role]
        assert batch["tokens_in"] == online["tokens_in"] > 0
        assert batch["cost"] == pytest.approx(online["cost"] / 2, rel=1e-6)


@pytest.mark.slow
def test_a_failed_line_is_a_failure_record_with_the_providers_reason(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan(fail={0: "This request's image could not be read."}))
        config = _config(batch_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 1
        assert server.stats.total == 0
        summary = _summary(tmp_path)
        assert summary["describer_failures"] == 1
        assert summary["batch"]["litellm:openai/vlm"]["failed"] == 1
        items = (latest_run(tmp_path / "runs" / "e2e") / "items.jsonl").read_text()
        assert "This request's image could not be read." in items
        assert "HTTP 400 invalid_request_error" in items


@pytest.mark.slow
def test_an_expired_batch_sends_its_unfinished_requests_again(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan(expire_after=5))
        config = _config(batch_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        # describer: the expired job and one for its 3 unfinished lines; then the judges
        assert server.batch_creates == 3
        assert server.lines_answered == 2 * N_ITEMS
        assert server.stats.total == 0
        assert _summary(tmp_path)["failed_items"] == 0


@pytest.mark.slow
def test_the_batch_api_out_of_reach_keeps_the_job_for_a_rerun(batch_data, tmp_path, capsys):
    with _server(batch_data) as server:
        config = _config(batch_data, server.url, tmp_path / "outage")
        server.poll_failures = 10_000  # the batch API stays down past the model's attempts
        assert main(["run", _write(config, tmp_path)]) == 1
        assert server.batch_creates == 1 and server.stats.total == 0
        err = capsys.readouterr()
        assert "Traceback" not in err.err
        summary = _summary(tmp_path / "outage")
        assert summary["describer_failures"] == N_ITEMS
        rows = (latest_run(tmp_path / "outage" / "runs" / "e2e") / "items.jsonl").read_text()
        assert "run again to resume it" in rows and "InternalServerError" in rows
        server.poll_failures = 1  # one 500 while polling: retried
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.poll_failures == 0
        # the same job was polled again, not sent again; then the judges' job
        assert server.batch_creates == 2 and server.stats.total == 0


@pytest.mark.slow
def test_a_resumed_job_and_a_new_one_of_a_model_are_both_counted(batch_data, tmp_path, capsys):
    """A run of 5 items whose job the batch API then keeps out of reach; the run of all 8
    resumes that job and puts the other 3 descriptions in a new one: the describer's record
    says 2 jobs (1 resumed), 8 requests, 8 answered, as the double's own Batch objects do (it
    said 1 job, 3 requests, 8 answered)."""
    with _server(batch_data) as server:
        path = _write(_config(batch_data, server.url, tmp_path), tmp_path)
        server.poll_failures = 10_000  # the first run's job stays open, for a re-run
        assert main(["run", path, "--limit", "5"]) == 1
        assert server.batch_creates == 1
        server.poll_failures = 0
        capsys.readouterr()
        assert main(["run", path]) == 0
        out = capsys.readouterr().out
        assert server.stats.total == 0 and server.lines_answered == 2 * N_ITEMS
        provider = jobs_by_model(server)
    described = _summary(tmp_path)["batch"]["litellm:openai/vlm"]
    assert {k: described[k] for k in ("jobs", "requests", "answered")} == provider["vlm"]
    assert provider["vlm"] == {"jobs": 2, "requests": N_ITEMS, "answered": N_ITEMS}
    assert (described["resumed"], described["failed"]) == (1, 0)
    assert "batch: litellm:openai/vlm: 2 jobs (1 resumed), 8 requests, 8 answered, 0 failed" in out


@pytest.mark.slow
def test_an_invalid_reply_is_reasked_in_the_next_job(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan())  # the descriptions
        server.plan(Plan(replace={0: "I would rather not answer in JSON."}))  # the judges
        config = _config(batch_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        # descriptions, judges, and the one re-ask (quoting the invalid reply) in a third job
        assert server.batch_creates == 3
        assert server.lines_answered == 2 * N_ITEMS + 1
        assert server.stats.total == 0
        summary = _summary(tmp_path)
        assert summary["failed_items"] == 0
        # as the double counts them: the judge's 8 lines and the re-ask's, in two jobs
        judged = summary["batch"]["litellm:openai/judge"]
        assert (judged["jobs"], judged["requests"]) == (2, N_ITEMS + 1)
        assert judged["answered"] == server.lines_answered - N_ITEMS == N_ITEMS + 1
        rows = (latest_run(tmp_path / "runs" / "e2e") / "items.jsonl").read_text().splitlines()
        reasked = [r for r in map(json.loads, rows) if r["details"].get("reasked")]
        assert [r["variant"] for r in reasked] == ["tit_llm"]


@pytest.mark.slow
def test_jobs_are_split_at_the_providers_limits(batch_data, tmp_path, monkeypatch):
    """Both limits in one run: the judges' lines (text, a few hundred bytes) are cut at the
    request count alone, the describer's (each carrying its image, 3 to 53 KB, base64) at
    the bytes as well, so the describer needs more jobs than the count alone makes."""
    from titjudge.models.litellm.batch import api as batch_api

    monkeypatch.setattr(batch_api, "OPENAI_MAX_REQUESTS", 5)
    monkeypatch.setattr(batch_api, "OPENAI_MAX_BYTES", 200_000)
    with _server(batch_data) as server:
        config = _config(batch_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.lines_answered == 2 * N_ITEMS and server.stats.total == 0
        # in creation order: the describer's jobs, then the judges' (they read descriptions)
        sizes = [b["request_counts"]["total"] for b in server.batches.values()]
        files = [len(server.contents[b["input_file_id"]]) for b in server.batches.values()]
    assert sum(sizes) == 2 * N_ITEMS
    described, judged = sizes[:-2], sizes[-2:]
    assert judged == [5, 3]  # the request limit
    assert sum(described) == N_ITEMS and max(described) <= 5
    assert len(described) > 2  # 8 lines in 5s would be 2 jobs: the bytes limit cut too
    assert max(files) <= 200_000 * 0.95


def test_batch_on_a_provider_without_one_is_refused_at_load(batch_data, tmp_path, capsys):
    config = _config(batch_data, "http://127.0.0.1:9/v1", tmp_path)
    config["describer"]["model"] = "litellm:hosted_vllm/vlm"
    assert main(["run", _write(config, tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "batch: true needs a provider with a batch API" in err
    assert "litellm:openai/..." in err and "'hosted_vllm'" in err
    assert "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", ["created", "creating"])
def test_killed_after_submission_resumes_its_job(batch_data, tmp_path, capsys, kill_at):
    """kill -9 once the job is created (or while its creation is in flight, before the
    ledger records its id): the re-run polls that job, submits nothing twice. The killed run
    is a process of its own; the re-run, after it is gone, is the CLI's main here."""
    with _server(batch_data) as server:
        server.hold()
        config = _config(batch_data, server.url, tmp_path)
        path = _write(config, tmp_path)
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
        proc = start_cli(["run", path], env=env)
        ledger = tmp_path / "cache" / "batches"
        if kill_at == "created":
            _wait(lambda: '"state": "submitted"' in _ledger_text(ledger), proc)
        else:
            _wait(lambda: server.batch_creates == 1, proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        if kill_at == "creating":
            _forget_job_id(ledger)  # as if killed before the job's id was recorded
        assert server.batch_creates == 1
        server.release()
        capsys.readouterr()
        code = main(["run", path])
        out, err = capsys.readouterr()
        assert code == 0, err
        # the describer's job was polled again, never sent again; then the judges' one
        assert server.batch_creates == 2
        assert server.lines_answered == 2 * N_ITEMS
        assert server.stats.total == 0
        # progress while waiting, on a non-terminal: jobs, requests done, elapsed
        assert "batch: 1 job open" in err and "elapsed" in err
        provider = jobs_by_model(server)
    summary = _summary(tmp_path)
    assert summary["failed_items"] == 0
    # the record counts every job this run drove, the resumed one too, as the double does
    described, judged = (
        summary["batch"]["litellm:openai/vlm"],
        summary["batch"]["litellm:openai/judge"],
    )
    for model, entry in (("vlm", described), ("judge", judged)):
        done = {k: entry[k] for k in ("jobs", "requests", "answered")}
        assert done == provider[model] == {"jobs": 1, "requests": N_ITEMS, "answered": N_ITEMS}
    assert (described["resumed"], judged["resumed"]) == (1, 0) and described["failed"] == 0
    assert "batch: litellm:openai/vlm: 1 job (1 resumed), 8 requests, 8 answered" in out


@pytest.mark.slow
def test_estimate_prices_batch_models_at_the_batch_rates(batch_data, tmp_path, capsys):
    found = {}
    for mode in ("online", "batch"):
        config = _config(batch_data, "http://127.0.0.1:9/v1", tmp_path / mode)
        config["describer"]["model"] = "litellm:openai/gpt-4o-mini"
        config["judges"][0]["price"] = {"input": 1.0, "output": 2.0}
        for section in (config["describer"], config["judges"][0]):
            section["batch"] = mode == "batch"
        capsys.readouterr()
        assert main(["estimate", _write(config, tmp_path), "--json"]) == 0
        found[mode] = {line["role"]: line for line in json.loads(capsys.readouterr().out)["lines"]}
    for role in ("describer", "judge"):
        online, batch = found["online"][role], found["batch"][role]
        assert batch["calls"] == online["calls"] == N_ITEMS
        assert batch["usd_max"] == pytest.approx(online["usd_max"] / 2, abs=2e-6)
        assert batch["price"] == f"{online['price']} (batch)"


@pytest.mark.slow
def test_two_runs_on_one_cache_never_send_a_line_twice(batch_data, tmp_path):
    """A second run on the same cache dir while the first one's job is open waits for the
    first (one run drives a model's batch jobs), then reads its answers from the cache."""
    with _server(batch_data) as server:
        server.hold()
        path = _write(_config(batch_data, server.url, tmp_path), tmp_path)
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
        first = start_cli(["run", path], env=env)
        _wait(lambda: server.batch_creates == 1, first)
        second = start_cli(["run", path], env=env)
        _wait(lambda: "another run holds" in second.stderr(), second)
        assert server.batch_creates == 1  # the second run created no job of its own
        server.release()
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        assert second.wait(timeout=120) == 0, second.stderr()
        assert server.batch_creates == 2  # the describer's job, then the judge's
        assert server.lines_answered == 2 * N_ITEMS
        assert server.stats.total == 0
