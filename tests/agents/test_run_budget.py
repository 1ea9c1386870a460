"""`run.budget_usd` through `titjudge run` against the loopback server: a hard cap that 16 calls
in flight cannot overshoot, a re-run with a larger budget that pays for nothing twice, and an
unpriced model refused at load. The server's own bill (the usage it reports, at the `price`
option's rates) is the ground truth the spend is checked against."""

import json
import threading
from pathlib import Path

import pytest
import yaml
from builders import run_config, write_config
from doubles.billing import Billing
from doubles.server import FakeOpenAIServer, build_responder
from doubles.server_request import Reply
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main

#: $ per 1M tokens, input and output, for both models (litellm's map prices neither)
RATE = 10.0
PRICE = {"input": RATE, "output": RATE}
#: covers about 8 of the 16 descriptions and none of the judge calls after them; 16 calls in
#: flight at their real cost (~$0.0036 each) would spend $0.058
BUDGET = 0.03
N_CALLS = 32  # 16 items: a description and an LLM judge call each


def _config(data, url, tmp_path, budget: float | None) -> str:
    config = run_config(data, tmp_path, url=url, concurrency=16)
    config["describer"]["price"] = PRICE
    config["judges"][0]["price"] = PRICE
    if budget is not None:
        config["run"]["budget_usd"] = budget
    return str(write_config(config, tmp_path))


def _run(data, tmp_path, capsys, budget: float | None, expect: int):
    """One `titjudge run` on a fresh server: the summary, the output, the bill, the bodies."""
    billing = Billing(build_responder("auto", descriptions=stored_descriptions(data)), RATE)
    with FakeOpenAIServer(responder=billing) as server:
        assert main(["run", _config(data, server.url, tmp_path, budget)]) == expect
        bodies = [r.body_hash for r in server.stats.records]
    out = capsys.readouterr().out
    summary = json.loads((latest_run(tmp_path / "runs" / "e2e") / "summary.json").read_text())
    return summary, out, billing, bodies


@pytest.mark.slow
def test_the_budget_is_a_hard_cap_that_concurrency_cannot_overshoot(synth_data, tmp_path, capsys):
    summary, out, billing, bodies = _run(synth_data, tmp_path, capsys, BUDGET, expect=3)

    budget = summary["budget"]
    assert budget["usd"] == BUDGET and budget["stopped"] is True
    # the server's bill and the run's ledger stay within the budget
    assert 0 < billing.total <= BUDGET
    assert budget["spent_usd"] <= BUDGET
    assert budget["spent_usd"] == pytest.approx(billing.total, abs=1e-6)
    # calls in flight settle below their worst case: the room they free is used
    assert budget["spent_usd"] > BUDGET / 2
    # calls were refused, and the judge calls of items whose description was refused were
    # never asked
    assert budget["calls_not_sent"] > 0
    assert 0 < len(bodies) + budget["calls_not_sent"] < N_CALLS
    # every call not sent was an item's (a description or a judge's score): no pairwise judge
    assert budget["item_calls_not_sent"] == budget["calls_not_sent"]
    assert budget["pair_calls_not_sent"] == budget["pairs_undone"] == 0
    assert 0 < budget["items_undone"] <= 16
    assert summary["failed_items"] == budget["items_undone"]
    # the run dir is written as usual, the refused calls are failure records naming the budget
    items = (latest_run(tmp_path / "runs" / "e2e") / "items.jsonl").read_text()
    assert "not sent: budget" in items
    # one line names the budget, the spend and what was left undone
    line = next(line for line in out.splitlines() if line.startswith("budget: "))
    assert f"budget: ${BUDGET:g} (run.budget_usd), spent ${budget['spent_usd']:.4f}" in line
    assert (
        f"{budget['calls_not_sent']} calls not sent ({budget['item_calls_not_sent']} for items), "
        f"{budget['items_undone']} items left undone"
    ) in line
    assert "pairwise" not in line  # no pairwise judge: nothing to say of pairs


@pytest.mark.slow
def test_a_rerun_with_a_larger_budget_pays_for_nothing_twice(synth_data, tmp_path, capsys):
    first, _, first_bill, first_bodies = _run(synth_data, tmp_path, capsys, BUDGET, expect=3)
    second, out, second_bill, second_bodies = _run(synth_data, tmp_path, capsys, 1.0, expect=0)

    # the server sees only the calls not answered before, and every call once in all
    assert not set(first_bodies) & set(second_bodies)
    assert len(first_bodies) + len(second_bodies) == N_CALLS
    assert second["budget"]["stopped"] is False and second["failed_items"] == 0
    assert second["budget"]["spent_usd"] == pytest.approx(second_bill.total, abs=1e-6)
    # the two runs cost what one full run costs
    (tmp_path / "full").mkdir()
    full, _, full_bill, _ = _run(synth_data, tmp_path / "full", capsys, None, expect=0)
    assert first_bill.total + second_bill.total == pytest.approx(full_bill.total)
    assert "budget" not in full
    # the terminal prints the record's spend (the server's bill agrees with it to 1e-6 above)
    assert f"budget: $1 (run.budget_usd), spent ${second['budget']['spent_usd']:.4f}" in out


def test_an_unpriced_model_under_a_budget_is_refused_before_any_request(
    synth_data, tmp_path, capsys
):
    with FakeOpenAIServer(responder="judge") as server:
        path = _config(synth_data, server.url, tmp_path, BUDGET)
        config = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        del config["describer"]["price"]  # litellm's map has no openai/vlm either
        Path(path).write_text(yaml.safe_dump(config), encoding="utf-8")
        assert main(["run", path]) == 2
        assert server.stats.total == 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "run.budget_usd" in err and "litellm:openai/vlm (describer)" in err
    assert "price" in err and "litellm:openai/judge" not in err
    assert not (tmp_path / "runs").exists()


def test_local_models_cost_nothing_and_never_block(synth_data, tmp_path, capsys):
    config = {
        "name": "local",
        "data": {"manifest": str(synth_data / "manifest.jsonl")},
        "describer": {"model": f"replay:{synth_data / 'descriptions.jsonl'}"},
        "judges": [{"name": "lexical", "kind": "lexical"}],
        "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
    }
    config["run"]["budget_usd"] = 0
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert main(["run", str(path)]) == 0
    summary = json.loads((latest_run(tmp_path / "runs" / "local") / "summary.json").read_text())
    assert summary["failed_items"] == 0 and summary["items"] == 16
    assert summary["budget"]["spent_usd"] == 0 and summary["budget"]["calls_not_sent"] == 0
    assert "budget: $0 (run.budget_usd), spent $0.0000" in capsys.readouterr().out


class PairwiseBilled:
    """Describes images for free and answers the pairwise judge's model (`PAIR_MODEL`), counting
    what it is asked: the server's own count of the pairwise verdicts' requests."""

    def __init__(self, data):
        self.auto = build_responder("auto", descriptions=stored_descriptions(data))
        self.pairs = 0
        self._lock = threading.Lock()

    def __call__(self, request):
        if request.model != PAIR_MODEL.split("/", 1)[1]:
            return self.auto(request)
        with self._lock:
            self.pairs += 1
        # the PairReply shape the pairwise judge asks for (`judges.schemas.PairReply`)
        return Reply(data={"rationale": "the first covers more of the prompt", "winner": "first"})


#: a pairwise judge's own model, priced; the describer costs nothing (never refused)
PAIR_MODEL = "litellm:openai/pairjudge"
#: worst cases of a few pairwise calls at a time: the budget stops among the 48 verdicts' calls
PAIR_BUDGET = 0.05


@pytest.mark.slow
def test_a_budget_stopped_among_pairwise_verdicts_counts_their_calls(synth_data, tmp_path, capsys):
    """Every pairwise call either reached the server or is counted unsent, as a pairwise
    verdict's: a stop among the pairs never reads `0 items left undone` alone."""
    responder = PairwiseBilled(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(synth_data, tmp_path, url=server.url, concurrency=16)
        config["describer"]["price"] = {"input": 0.0, "output": 0.0}
        config["judges"] = [
            {"name": "lexical", "kind": "lexical"},
            {
                "name": "pair",
                "kind": "pairwise",
                "model": PAIR_MODEL,
                "api_base": server.url,
                "price": PRICE,
            },
        ]
        config["run"]["budget_usd"] = PAIR_BUDGET
        assert main(["run", str(write_config(config, tmp_path))]) == 3
    out = capsys.readouterr().out
    run = latest_run(tmp_path / "runs" / "e2e")
    budget = json.loads((run / "summary.json").read_text())["budget"]
    pairs = [json.loads(line) for line in (run / "pairs_pair.jsonl").read_text().splitlines()]
    assert len(pairs) == 24

    # the server's own count and the run's agree: 2 orders x 24 pairs, each sent or not sent
    assert 0 < responder.pairs < 2 * len(pairs)
    assert budget["pair_calls_not_sent"] == 2 * len(pairs) - responder.pairs
    assert budget["run_pair_calls_not_sent"] == budget["pair_calls_not_sent"]
    assert budget["item_calls_not_sent"] == budget["run_item_calls_not_sent"] == 0
    assert budget["calls_not_sent"] == budget["pair_calls_not_sent"]
    # the verdicts left undone are those the pairs file says the budget did not send
    refused = [p for p in pairs if "not sent: budget" in json.dumps(p)]
    assert budget["pairs_undone"] == len(refused) > 0 and budget["items_undone"] == 0
    line = next(line for line in out.splitlines() if line.startswith("budget: "))
    assert (
        f"stopped: {budget['calls_not_sent']} calls not sent "
        f"({budget['pair_calls_not_sent']} for pairwise verdicts), "
        f"0 items and {budget['pairs_undone']} pairwise verdicts left undone"
    ) in line
