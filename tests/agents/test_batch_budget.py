"""`run.budget_usd` with `batch: true`: each batch line's worst case (at the batch price) is
reserved before it goes into a job, so a budget is a hard cap on batch runs too; a line it
cannot cover is not sent, and a re-run with a larger budget sends only what is left. The
double's own bill (every line answered, at half the `price` option's rate: the batch
discount) is the ground truth."""

import io
import json
import os
import signal
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest
from batch_helpers import N_ITEMS, batch_env, jobs_by_model
from batch_helpers import ledger_text as _ledger_text
from batch_helpers import wait_for as _wait
from batch_helpers import write_config as _write
from builders import run_config
from cli_process import start_cli
from doubles.batch_server import BatchServer
from doubles.billing import Billing
from doubles.server import build_responder
from doubles.server_request import Reply
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main

#: $ per 1M tokens, input and output, for both models (litellm's map prices neither)
RATE = 10.0
#: covers some of the 8 descriptions' worst cases (512 output tokens each, at $5 per 1M),
#: not all (4 of them, as the double answers them)
BUDGET = 0.02


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


def _config(data, url, tmp_path, budget: float) -> str:
    config = run_config(data, tmp_path, url=url, batch=True, budget_usd=budget)
    for section in (config["describer"], config["judges"][0]):
        section["price"] = {"input": RATE, "output": RATE}
    return _write(config, tmp_path)


def _run(data, tmp_path, budget: float, expect: int) -> SimpleNamespace:
    """A run under `budget`: its summary, stdout, the double's bill (at the batch price) and
    the lines it answered."""
    billing = Billing(build_responder("auto", descriptions=stored_descriptions(data)), RATE)
    out = io.StringIO()
    with BatchServer(responder=billing) as server, redirect_stdout(out):
        assert main(["run", _config(data, server.url, tmp_path, budget)]) == expect
        assert server.stats.total == 0  # nothing online
        lines = server.lines_answered
    run = latest_run(tmp_path / "runs" / "e2e")
    summary = json.loads((run / "summary.json").read_text())
    return SimpleNamespace(
        summary=summary, out=out.getvalue(), bill=billing.total / 2, lines=lines, run=run
    )


@pytest.fixture(scope="module")
def capped(batch_data, tmp_path_factory):
    """A run under BUDGET, which it cannot finish (the folder's cache is the rerun's)."""
    tmp = tmp_path_factory.mktemp("capped")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        return SimpleNamespace(tmp=tmp, first=_run(batch_data, tmp, BUDGET, expect=3))


@pytest.mark.slow
def test_a_budget_caps_batch_lines_before_they_are_sent(capped):
    summary, bill, lines, run = (
        capped.first.summary,
        capped.first.bill,
        capped.first.lines,
        capped.first.run,
    )

    budget = summary["budget"]
    assert budget["stopped"] is True and budget["run_calls_not_sent"] > 0
    # the provider's bill (batch price) and the run's ledger stay within the budget
    assert 0 < bill <= BUDGET
    assert budget["spent_usd"] == pytest.approx(bill, abs=1e-6)
    # some descriptions were sent, not all: lines the budget could not cover never left
    assert 0 < lines < N_ITEMS
    assert budget["items_undone"] > 0
    items = [json.loads(line) for line in (run / "items.jsonl").read_text().splitlines()]
    refused = {i["item_id"] for i in items if "not sent: budget" in json.dumps(i)}
    assert len(refused) == budget["items_undone"]
    # once a line could not be covered, every later priced call is refused (as online)
    assert summary["batch"]["litellm:openai/judge"]["requests"] == 0
    # every call is sent or counted: each description answered (a line the double answered)
    # or refused, and each described item's judge line refused: N_ITEMS not sent, items' all
    assert budget["run_calls_not_sent"] == (N_ITEMS - lines) + lines
    assert budget["run_item_calls_not_sent"] == N_ITEMS and budget["run_pair_calls_not_sent"] == 0
    assert f"budget: ${BUDGET} (run.budget_usd)" in capped.first.out


@pytest.mark.slow
def test_a_rerun_with_a_larger_budget_sends_only_what_is_left(capped, batch_data):
    """The capped run's folder run again under a budget that covers every call."""
    first = capped.first
    second = _run(batch_data, capped.tmp, 5.0, expect=0)

    # every call answered once in all: the first run's answers come from the cache
    assert first.lines + second.lines == 2 * N_ITEMS
    assert second.summary["failed_items"] == 0
    assert second.summary["budget"]["spent_usd"] == pytest.approx(second.bill, abs=1e-6)
    assert second.summary["budget"]["stopped"] is False


@pytest.mark.slow
def test_a_batch_models_calls_sent_online_are_counted_and_said(
    batch_data, tmp_path, capsys, monkeypatch
):
    """Calls a batch phase did not reach (here: one round only, so the judge's calls wait for
    the graph) are sent online at the list price: the run says so, never silently."""
    import titjudge.agents.batch_phase as phase

    monkeypatch.setattr(phase, "MAX_PHASE_ROUNDS", 1)
    with BatchServer(
        responder=build_responder("auto", descriptions=stored_descriptions(batch_data))
    ) as server:
        config = json.loads(Path(_config(batch_data, server.url, tmp_path, 5.0)).read_text())
        del config["run"]["budget_usd"]
        path = tmp_path / "online.json"
        path.write_text(json.dumps(config))
        assert main(["run", str(path)]) == 0
        assert server.lines_answered == N_ITEMS and server.stats.total == N_ITEMS
    summary = json.loads((latest_run(tmp_path / "runs" / "e2e") / "summary.json").read_text())
    assert summary["batch"]["litellm:openai/judge"]["sent_online"] == N_ITEMS
    assert "sent_online" not in summary["batch"]["litellm:openai/vlm"]
    out = capsys.readouterr().out
    assert f"batch: litellm:openai/judge sent {N_ITEMS} calls online at the list price" in out


@pytest.mark.slow
def test_a_resumed_job_is_counted_as_spent_once(batch_data, tmp_path, capsys):
    """kill -9 once the describer's job is created; the re-run resumes it: its lines were
    reserved by the killed run, so this run counts their cost as spent without reserving
    them, and the total spend is the provider's bill, paid once. The killed run is a process
    of its own; the re-run, after it is gone, is the CLI's main here."""
    billing = Billing(build_responder("auto", descriptions=stored_descriptions(batch_data)), RATE)
    with BatchServer(responder=billing) as server:
        server.hold()
        path = _config(batch_data, server.url, tmp_path, 5.0)
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
        killed = start_cli(["run", path], env=env)
        # the job's id recorded in the ledger
        _wait(
            lambda: '"state": "submitted"' in _ledger_text(tmp_path / "cache" / "batches"), killed
        )
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=60)
        server.release()
        capsys.readouterr()
        code = main(["run", path])
        err = capsys.readouterr().err
        assert code == 0, err
        assert server.batch_creates == 2 and server.lines_answered == 2 * N_ITEMS
        provider = jobs_by_model(server)
    summary = json.loads((latest_run(tmp_path / "runs" / "e2e") / "summary.json").read_text())
    assert summary["budget"]["spent_usd"] == pytest.approx(billing.total / 2, abs=1e-6)
    assert summary["budget"]["stopped"] is False
    # the resumed job is one of this run's jobs, its lines its requests, as the double counts
    for model, resumed in (("vlm", 1), ("judge", 0)):
        entry = summary["batch"][f"litellm:openai/{model}"]
        assert {k: entry[k] for k in ("jobs", "requests", "answered")} == provider[model]
        assert entry["resumed"] == resumed


#: the pairwise judge's own model, priced and sent as batch lines
PAIR_MODEL = "litellm:openai/pairjudge"


def _pair_reply(describe):
    """Descriptions for the describer's lines; the PairReply shape (`judges.schemas.PairReply`)
    for the pairwise judge's model."""

    def answer(request):
        if request.model == PAIR_MODEL.split("/", 1)[1]:
            return Reply(
                data={"rationale": "the first covers more of the prompt", "winner": "first"}
            )
        return describe(request)

    return answer


@pytest.mark.slow
def test_batch_lines_a_budget_refuses_are_counted_as_the_pairwise_verdicts_they_were_for(
    batch_data, tmp_path, capsys, monkeypatch
):
    """A free describer and a priced pairwise judge, both `batch: true`: the budget covers a few
    of the pairwise lines; every pairwise line is answered by the double or counted unsent, as
    a pairwise verdict's, and the verdicts left undone are counted."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    describe = build_responder("auto", descriptions=stored_descriptions(batch_data))
    with BatchServer(responder=_pair_reply(describe)) as server:
        config = run_config(batch_data, tmp_path, url=server.url, batch=True, budget_usd=0.02)
        config["describer"]["price"] = {"input": 0.0, "output": 0.0}
        config["judges"] = [
            {
                **config["judges"][0],
                "name": "pair",
                "kind": "pairwise",
                "model": PAIR_MODEL,
                "price": {"input": RATE, "output": RATE},
            },
            {"name": "lexical", "kind": "lexical"},
        ]
        assert main(["run", _write(config, tmp_path)]) == 3
        assert server.stats.total == 0  # nothing online
        pair_lines = jobs_by_model(server)[PAIR_MODEL.split("/", 1)[1]]["requests"]
    run = latest_run(tmp_path / "runs" / "e2e")
    budget = json.loads((run / "summary.json").read_text())["budget"]
    pairs = [json.loads(line) for line in (run / "pairs_pair.jsonl").read_text().splitlines()]
    assert 0 < pair_lines < 2 * len(pairs)
    assert budget["run_pair_calls_not_sent"] == 2 * len(pairs) - pair_lines
    assert budget["run_item_calls_not_sent"] == 0 and budget["items_undone"] == 0
    refused = [p for p in pairs if "not sent: budget" in json.dumps(p)]
    assert budget["pairs_undone"] == len(refused) > 0
    out = capsys.readouterr().out
    assert f"({budget['pair_calls_not_sent']} for pairwise verdicts)" in out
