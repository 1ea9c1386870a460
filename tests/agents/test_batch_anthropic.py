"""`batch: true` on `litellm:anthropic/...` models: a run's calls go through Anthropic's Message
Batches API (a loopback double of it, `doubles.anthropic_batch_server`, whose lines are answered
as its online `/v1/messages` answers them), durably, at batch price."""

import json
import os
import signal

import pytest
from batch_helpers import N_ITEMS, batch_env
from batch_helpers import run_dir as _run_dir
from batch_helpers import summary as _summary
from batch_helpers import wait_for as _wait
from batch_helpers import write_config as _write
from builders import run_config
from cli_process import start_cli
from doubles.anthropic_batch_server import CUSTOM_ID, AnthropicBatchServer, Plan
from doubles.anthropic_messages import STRUCTURED_BETA
from doubles.server import build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main
from titjudge.models.calls.batch_answers import body_hash
from titjudge.models.litellm.batch import anthropic as batch_anthropic

KEY = "sk-ant-test-not-a-real-key-0123"
DESCRIBER = "litellm:anthropic/claude-sonnet-4-5"
#: native structured output (litellm sends `output_format` under the structured-outputs beta)
JUDGE = "litellm:anthropic/claude-haiku-4-5"


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def _config(data, url, tmp_path, judge=JUDGE, batch=True):
    return run_config(
        data, tmp_path, url=url, describer_model=DESCRIBER, judge_model=judge, batch=batch
    )


def _server(data) -> AnthropicBatchServer:
    responder = build_responder("auto", descriptions=stored_descriptions(data))
    return AnthropicBatchServer(responder)


@pytest.mark.slow
def test_every_item_is_answered_by_batches_and_an_online_rerun_is_cached(batch_data, tmp_path):
    with _server(batch_data) as server:
        config = _config(batch_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.online == []  # nothing online: every call went as a batch line
        assert server.batch_creates == 2  # the descriptions, then the judges that read them
        assert server.lines_answered == 2 * N_ITEMS
        # the judges' lines use structured outputs: their batch names its beta, as online
        assert [c["betas"] for c in server.creates] == [set(), {STRUCTURED_BETA}]
        ids = [r["custom_id"] for c in server.creates for r in c["requests"]]
        assert len(set(ids)) == 2 * N_ITEMS and all(CUSTOM_ID.match(i) for i in ids)
        assert server.keys == {KEY}
        summary = _summary(tmp_path)
        assert summary["failed_items"] == 0
        assert summary["batch"][DESCRIBER]["answered"] == N_ITEMS
        assert summary["batch"][JUDGE]["requests"] == N_ITEMS
        assert summary["usage"]["describer"]["cache_hits"] == 0
        scores = (_run_dir(tmp_path) / "scores.csv").read_text()
        assert not list((tmp_path / "cache" / "batches").glob("*.json"))

        # the same config online: the same cache keys, so every answer is cached
        online = _config(batch_data, server.url, tmp_path, batch=False)
        assert main(["run", _write(online, tmp_path)]) == 0
        assert server.online == [] and server.batch_creates == 2
        usage = _summary(tmp_path)["usage"]
        assert usage["describer"]["cache_hits"] == N_ITEMS == usage["judge"]["cache_hits"]
        assert (_run_dir(tmp_path) / "scores.csv").read_text() == scores


@pytest.mark.slow
def test_a_failed_line_is_a_failure_record_with_the_providers_reason(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan(fail={0: "messages.0.content.0.image.source: image could not be read"}))
        assert main(["run", _write(_config(batch_data, server.url, tmp_path), tmp_path)]) == 1
        assert server.online == []
        summary = _summary(tmp_path)
        assert summary["describer_failures"] == 1
        assert summary["batch"][DESCRIBER]["failed"] == 1
        items = (_run_dir(tmp_path) / "items.jsonl").read_text()
        assert "batch line failed: invalid_request_error: messages.0.content.0.image" in items


@pytest.mark.slow
def test_expired_lines_are_sent_again(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan(expire_after=5))
        assert main(["run", _write(_config(batch_data, server.url, tmp_path), tmp_path)]) == 0
        # describer: the batch that expired, one for its 3 expired lines; then the judges
        assert [len(c["requests"]) for c in server.creates] == [N_ITEMS, N_ITEMS - 5, N_ITEMS]
        expired = {r["custom_id"] for r in server.creates[0]["requests"][5:]}
        assert {r["custom_id"] for r in server.creates[1]["requests"]} == expired
        assert server.lines_answered == 2 * N_ITEMS and server.online == []
        assert _summary(tmp_path)["failed_items"] == 0


@pytest.mark.slow
def test_an_invalid_structured_reply_is_reasked_in_the_next_batch(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan())  # the descriptions
        server.plan(Plan(replace={0: "I would rather not answer in JSON."}))  # the judges
        assert main(["run", _write(_config(batch_data, server.url, tmp_path), tmp_path)]) == 0
        # descriptions, judges, and the one re-ask (quoting the invalid reply) in a third batch
        assert [len(c["requests"]) for c in server.creates] == [N_ITEMS, N_ITEMS, 1]
        (reask,) = server.creates[2]["requests"]
        assert "I would rather not answer in JSON." in json.dumps(reask["params"]["messages"])
        assert server.online == []
        assert _summary(tmp_path)["failed_items"] == 0
        rows = (_run_dir(tmp_path) / "items.jsonl").read_text().splitlines()
        reasked = [r for r in map(json.loads, rows) if r["details"].get("reasked")]
        assert [r["variant"] for r in reasked] == ["tit_llm"]


@pytest.mark.slow
def test_same_bodies_as_online_and_spend_at_the_batch_price(batch_data, tmp_path):
    """Each line's params are the online call's body; the describer (claude-sonnet-4-5) costs
    litellm's batch rates (half its list price), and the judge, a model litellm does not price
    whose replies come as litellm's JSON tool, half its `price` option."""
    spent, bodies = {}, {}
    for mode in ("online", "batch"):
        with _server(batch_data) as server:
            config = _config(batch_data, server.url, tmp_path / mode, "litellm:anthropic/judge")
            config["judges"][0]["price"] = {"input": 1.0, "output": 2.0}
            for section in (config["describer"], config["judges"][0]):
                section["batch"] = mode == "batch"
            assert main(["run", _write(config, tmp_path)]) == 0
            assert _summary(tmp_path / mode)["failed_items"] == 0
            usage = _summary(tmp_path / mode)["usage"]
            spent[mode] = {role: usage[role] for role in ("describer", "judge")}
            sent = server.online or [r["params"] for c in server.creates for r in c["requests"]]
            bodies[mode] = sorted(body_hash(body) for body in sent)
            scores = (latest_run(tmp_path / mode / "runs" / "e2e") / "scores.csv").read_text()
            spent[mode]["scores"] = scores
    assert len(bodies["batch"]) == 2 * N_ITEMS and bodies["batch"] == bodies["online"]
    assert spent["batch"]["scores"] == spent["online"]["scores"]
    for role in ("describer", "judge"):
        online, batch = spent["online"][role], spent["batch"][role]
        assert batch["tokens_in"] == online["tokens_in"] > 0
        assert batch["cost"] == pytest.approx(online["cost"] / 2, rel=1e-6)


@pytest.mark.slow
def test_killed_while_creating_adopts_the_batch_the_provider_lists(
    batch_data, tmp_path, capsys, monkeypatch
):
    """kill -9 while the batch's creation is in flight, before the ledger records its id: the
    re-run finds the batch in Anthropic's list (same size, created after the creation was
    asked) and polls it, never submitting its requests twice. The killed run is a process of
    its own; the re-run, after it is gone, is the CLI's main here."""
    with _server(batch_data) as server:
        server.hold()
        path = _write(_config(batch_data, server.url, tmp_path), tmp_path)
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY}
        proc = start_cli(["run", path], env=env)
        _wait(lambda: server.batch_creates == 1, proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        ledger = tmp_path / "cache" / "batches"
        (found,) = ledger.glob("*.json")
        raw = json.loads(found.read_text())
        for job in raw["jobs"]:  # as if killed before the batch's id was recorded
            job["state"], job["job_id"] = "creating", None
        found.write_text(json.dumps(raw))
        assert KEY not in found.read_text()
        server.release()
        # the re-run takes nothing yet, as a process of its own would: batches earlier runs in
        # this process took (the doubles number them alike) are not this run's
        monkeypatch.setattr(batch_anthropic, "TAKEN", set())
        capsys.readouterr()
        code = main(["run", path])
        err = capsys.readouterr().err
        assert code == 0, err
        # the describer's batch was adopted and polled, never sent again; then the judges' one
        assert server.batch_creates == 2
        assert server.lines_answered == 2 * N_ITEMS and server.online == []
        assert "batch: 1 job open" in err
        assert KEY not in err
    assert _summary(tmp_path)["failed_items"] == 0
