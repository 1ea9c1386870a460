"""`run.budget_usd` on an ablation grid: one ledger for every row, checked through `titjudge
ablation` against the loopback server's own bill."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from ablation_grids import RATE, grid_config
from doubles.billing import Billing
from doubles.server import FakeOpenAIServer
from run_dirs import latest_run

from titjudge.cli import main

PRICE = {"input": RATE, "output": RATE}  # for every model of the grid


def _grid(bench: Path, tmp: Path, url: str, budget: float | None) -> str:
    raw: dict[str, Any] = grid_config(bench, url, tmp)
    for section in [*raw["describers"], raw["comparers"][-1]]:
        section["price"] = PRICE
    if budget is not None:
        raw["run"]["budget_usd"] = budget
    path = tmp / "grid.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return str(path)


def _ablation(
    make: Callable[[], Any], bench: Path, tmp: Path, budget: float | None, expect: int
) -> tuple[dict, float]:
    billing = Billing(make(), RATE)
    with FakeOpenAIServer(
        responder=billing, models=("vlm-sharp", "vlm-blurry", "judge-llm")
    ) as server:
        assert main(["ablation", _grid(bench, tmp, server.url, budget)]) == expect
    return json.loads(
        (latest_run(tmp / "runs" / "grid") / "ablation.json").read_text()
    ), billing.total


#: a full grid costs $0.478 at RATE (row sharp $0.254, row blurry $0.224): the budget covers the
#: first row, not the second
BUDGET = 0.35


@pytest.mark.slow
def test_one_budget_covers_the_whole_grid(
    bench, make_grid_responder, plain_grid, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    found, bill = _ablation(make_grid_responder, bench, tmp_path, BUDGET, expect=3)

    budget = found["budget"]
    assert budget["usd"] == BUDGET and budget["stopped"] is True
    assert 0 < bill <= BUDGET and budget["spent_usd"] <= BUDGET
    assert abs(budget["spent_usd"] - bill) < 1e-6
    assert found["exit_code"] == 3
    # one ledger for both rows: the second row runs on what the first left
    grid_dir = latest_run(tmp_path / "runs" / "grid")
    rows = {
        name: json.loads((grid_dir / "rows" / name / "summary.json").read_text())["budget"]
        for name in ("sharp", "blurry")
    }
    assert rows["sharp"]["run_calls_not_sent"] == 0
    assert rows["blurry"]["run_calls_not_sent"] == budget["calls_not_sent"] > 0
    spent = rows["sharp"]["run_spent_usd"] + rows["blurry"]["run_spent_usd"]
    assert abs(spent - budget["spent_usd"]) < 1e-5
    assert rows["blurry"]["run_spent_usd"] <= BUDGET - rows["sharp"]["run_spent_usd"] + 1e-9
    assert budget["items_undone"] == rows["blurry"]["items_undone"] > 0
    # the grid's ledger splits its unsent calls as the rows' own do (no pairwise column)
    assert budget["item_calls_not_sent"] == rows["blurry"]["run_item_calls_not_sent"] > 0
    assert budget["pair_calls_not_sent"] == budget["pairs_undone"] == 0
    out = capsys.readouterr().out
    assert f"budget: ${BUDGET:g} (run.budget_usd), spent ${budget['spent_usd']:.4f}" in out
    assert f"{budget['calls_not_sent']} calls not sent" in out

    # a larger budget finishes the grid, paying only for what the first left undone: the two
    # bills add up to the bill of the same grid run whole without a budget (`plain_grid`,
    # billed at RATE by its own server; a price in the config changes no request)
    second, second_bill = _ablation(make_grid_responder, bench, tmp_path, 2.0, expect=0)
    assert second["budget"]["stopped"] is False
    assert abs(bill + second_bill - plain_grid.bill) < 1e-6


def test_an_unpriced_comparer_under_a_budget_is_refused_before_any_request(
    bench, make_grid_responder, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    billing = Billing(make_grid_responder(), RATE)
    with FakeOpenAIServer(responder=billing) as server:
        path = _grid(bench, tmp_path, server.url, BUDGET)
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        del raw["comparers"][-1]["price"]
        Path(path).write_text(yaml.safe_dump(raw), encoding="utf-8")
        assert main(["ablation", path]) == 2
        assert server.stats.total == 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "litellm:openai/judge-llm (comparer tit_llm)" in err and "run.budget_usd" in err
