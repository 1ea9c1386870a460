"""`titjudge compare` on real runs with a known difference, and on runs over different pairs."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from scipy.stats import binomtest

import titjudge
from titjudge.cli import main
from titjudge.report.analysis.compare import compare_runs
from titjudge.report.analysis.run import RunData

# every test reads a whole run made for it (modes_run, offline_runs in conftest.py)
pytestmark = pytest.mark.slow


def _compare_json(capsys, *args: str) -> dict:
    assert main(["compare", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_finds_the_known_difference(offline_runs, capsys):
    found = _compare_json(capsys, str(offline_runs.base), str(offline_runs.worse))
    base = titjudge.load_run(offline_runs.base).pairs
    worse = titjudge.load_run(offline_runs.worse).pairs
    both = base.merge(worse, on=["item_a", "item_b"], suffixes=("_base", "_worse"))
    both = both[both.correct_base.notna() & both.correct_worse.notna()]
    base_only = int(((both.correct_base == 1) & (both.correct_worse == 0)).sum())
    worse_only = int(((both.correct_base == 0) & (both.correct_worse == 1)).sum())
    # the only change: one model's descriptions, so only pairs with its images can differ
    differs = both[both.correct_base != both.correct_worse]
    assert len(differs) > 0
    degraded = offline_runs.degraded
    assert ((differs.t2i_model_a_base == degraded) | (differs.t2i_model_b_base == degraded)).all()
    (test,) = found["mcnemar"]
    assert (test["variant_a"], test["variant_b"]) == ("r1:lexical", "r2:lexical")
    assert (test["a_only"], test["b_only"]) == (base_only, worse_only)
    assert test["n_pairs"] == len(both)
    assert test["p_value"] == pytest.approx(
        binomtest(base_only, base_only + worse_only, 0.5).pvalue, rel=1e-12
    )
    assert test["p_value"] < 0.05  # the degraded descriptions cost real accuracy
    columns = {row["column"]: row for row in found["variants"]}
    written = json.loads((offline_runs.base / "metrics.json").read_text())["variants"]["lexical"]
    assert columns["r1:lexical"]["pairwise_accuracy"] == written["pairwise_accuracy"]
    assert columns["r1:lexical"]["srcc"] == written["srcc"]
    assert columns["r1:lexical"]["ci"] == written["ci"]["pairwise_accuracy"]
    assert columns["r2:lexical"]["pairwise_accuracy"] < columns["r1:lexical"]["pairwise_accuracy"]
    # what changed between the configs: the describer's replayed file
    keys = {c["key"] for c in found["config_changes"]}
    assert keys == {"describer.model"}
    assert found["notes"] == []


def test_kappa_of_the_two_runs_is_cohens_kappa_of_their_verdicts(offline_runs):
    found = compare_runs([RunData.load(offline_runs.base), RunData.load(offline_runs.worse)])
    (agreed,) = found.agreement
    base = titjudge.load_run(offline_runs.base).pairs
    worse = titjudge.load_run(offline_runs.worse).pairs
    both = base.merge(worse, on=["item_a", "item_b"], suffixes=("_b", "_w"))
    both = both[both.correct_b.notna() & both.correct_w.notna()]
    labels = pd.crosstab(both.outcome_b, both.outcome_w)
    n = labels.values.sum()
    observed = sum(labels.at[c, c] for c in labels.index if c in labels.columns) / n
    expected = sum(
        labels.loc[c].sum() * labels[c].sum() for c in labels.index if c in labels.columns
    ) / (n * n)
    assert agreed["n_pairs"] == n
    assert agreed["kappa"] == pytest.approx((observed - expected) / (1 - expected), rel=1e-12)


def test_runs_over_different_pairs_are_compared_on_their_intersection(offline_runs, capsys):
    found = _compare_json(capsys, str(offline_runs.base), str(offline_runs.small))
    small_pairs = len(titjudge.load_run(offline_runs.small).pairs) // 1  # one variant
    base_pairs = len(titjudge.load_run(offline_runs.base).pairs)
    assert small_pairs < base_pairs
    assert found["n_shared_pairs"] == small_pairs
    assert [r["n_pairs"] for r in found["runs"]] == [base_pairs, small_pairs]
    (note,) = found["notes"]
    assert f"({base_pairs}, {small_pairs})" in note and f"the {small_pairs} they share" in note
    # same judge, same descriptions: on the shared pairs the two agree on every verdict
    (test,) = found["mcnemar"]
    assert (test["a_only"], test["b_only"], test["p_value"]) == (0, 0, 1.0)
    assert found["agreement"][0]["kappa"] == 1.0
    small = json.loads((offline_runs.small / "metrics.json").read_text())["variants"]["lexical"]
    by_column = {row["column"]: row for row in found["variants"]}
    assert by_column["r1:lexical"]["pairwise_accuracy"] == small["pairwise_accuracy"]


def test_compare_one_run_compares_its_variants_like_metrics_json(modes_run, capsys):
    found = _compare_json(capsys, str(modes_run), "--variants", "lexical,pair,llm")
    written = json.loads((modes_run / "metrics.json").read_text())
    expected = {
        (c["variant_a"], c["variant_b"]): c
        for c in written["comparisons"]
        if {c["variant_a"], c["variant_b"]} <= {"lexical", "pair", "llm"}
    }
    assert len(found["mcnemar"]) == 3
    for test in found["mcnemar"]:
        key = tuple(sorted((test["variant_a"], test["variant_b"])))
        mine = expected[key]  # type: ignore[index]
        flipped = key != (test["variant_a"], test["variant_b"])
        assert test["n_pairs"] == mine["n_pairs"]
        assert (test["a_only"], test["b_only"]) == (
            (mine["b_only"], mine["a_only"]) if flipped else (mine["a_only"], mine["b_only"])
        )
        assert test["p_value"] == mine["p_value"]


def test_each_variant_comes_with_its_origin(modes_run, dead_judge_run, capsys):
    # modes_run's llm falls back to lexical for one of its 4 T2I models' images
    rows = {row["column"]: row for row in _compare_json(capsys, str(modes_run))["variants"]}
    llm = rows["llm"]
    assert (llm["origin"]["fallback"], llm["origin"]["fallback_share"]) == ("lexical", 0.25)
    assert llm["origin"]["stopped"] is False and llm["pairwise_accuracy"] is not None
    assert llm["origin_note"] == "llm: 8 of 32 (25%) of its scores came from its fallback lexical"
    assert rows["lexical"]["origin_note"] is None
    # the dead judge: every score lexical's, its model stopped, no number of its own
    rows = {row["column"]: row for row in _compare_json(capsys, str(dead_judge_run))["variants"]}
    dead = rows["tit_llm"]
    assert dead["pairwise_accuracy"] is None and dead["n_pairs"] == 0 and dead["srcc"] is None
    assert dead["origin"]["fallback_share"] == 1.0 and dead["origin"]["stopped"] is True
    assert dead["origin_note"].startswith(
        "tit_llm: no number of its own: all 12 of its scores came from its fallback lexical"
    )
    assert rows["lexical"]["pairwise_accuracy"] is not None
    assert main(["compare", str(dead_judge_run)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("│ tit_llm"))
    assert [cell.strip() for cell in row.split("│")][-3:-1] == ["12 (100%)", "yes"]
    assert "tit_llm: no number of its own" in out


def test_compare_prints_tables(offline_runs, capsys):
    assert main(["compare", str(offline_runs.base), str(offline_runs.worse)]) == 0
    out = capsys.readouterr().out
    assert "exact McNemar" in out and "kappa" in out
    assert "describer.model" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--breakdown", "colour"], "--breakdown 'colour': choose from length, model, element"),
        (["--breakdown", "length", "--length-edges", "300,100"], "increasing"),
        (["--plot", "x.png"], "--plot and --length-edges need --breakdown length"),
        (["--variants", "lexcal"], "did you mean 'lexical'"),
    ],
)
def test_bad_compare_arguments_are_one_line_and_exit_2(offline_runs, capsys, extra, message):
    assert main(["compare", str(offline_runs.base), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
