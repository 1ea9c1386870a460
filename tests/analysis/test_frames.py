"""`titjudge.load_run(...)`'s frames on real run dirs: their arithmetic is metrics.json's."""

from __future__ import annotations

import json
import math
import sys

import pytest

import titjudge
from titjudge.errors import MissingDependencyError

# every test reads a whole run made for it (modes_run, offline_runs in conftest.py)
pytestmark = pytest.mark.slow


def _metrics_json(run_dir):
    return json.loads((run_dir / "metrics.json").read_text())


def test_pairs_frame_groupby_mean_is_metrics_json_accuracy_exactly(modes_run):
    metrics = _metrics_json(modes_run)["variants"]
    # the run exercises every source of outcomes: scores, verdicts, the fallback rule
    assert metrics["pair"]["accuracy_source"] == "verdicts"
    assert metrics["llm"]["n_fallback"] > 0 and metrics["llm"]["n_pairs_mixed_source"] > 0
    pairs = titjudge.load_run(modes_run).pairs
    accuracy = pairs.groupby("variant").correct.mean()
    for name, entry in metrics.items():
        assert accuracy[name] == entry["pairwise_accuracy"], name
        mine = pairs[pairs.variant == name]
        assert int(mine.correct.notna().sum()) == entry["n_pairs"], name
        assert int(mine.correct.sum()) == entry["n_correct"], name
        assert int((mine.outcome == "metric_tie").sum()) == entry["n_metric_ties"], name
        assert int((mine.outcome == "human_tie").sum()) <= entry["n_human_ties"], name


def test_pairs_frame_rows_carry_the_pair_and_the_verdict(modes_run, modes_data):
    pairs = titjudge.load_run(modes_run).pairs
    human = (modes_data / "pairs.csv").read_text().splitlines()[1:]
    assert len(pairs) == len(human) * 4  # one row per pair x variant
    prompts = {
        json.loads(line)["prompt_id"]: json.loads(line)["prompt"]
        for line in (modes_data / "manifest.jsonl").read_text().splitlines()
    }
    row = pairs[(pairs.variant == "lexical") & (pairs.human != "tie")].iloc[0]
    assert row.prompt == prompts[row.prompt_id]
    assert row.prompt_words == len(prompts[row.prompt_id].split())
    assert row.verdict == ("a" if row.score_a > row.score_b else "b")
    assert row.correct == float(row.verdict == row.human)
    assert set(pairs[pairs.human == "tie"].correct.isna()) == {True}
    # a pair the fallback rule leaves out is in the frame, not counted
    llm = pairs[pairs.variant == "llm"]
    assert (llm.outcome == "failed").sum() > 0 and llm[llm.outcome == "failed"].correct.isna().all()


def test_items_frame_is_items_jsonl(modes_run, failing_model):
    lines = [json.loads(line) for line in (modes_run / "items.jsonl").read_text().splitlines()]
    items = titjudge.load_run(modes_run).items
    assert len(items) == len(lines)
    assert list(items.columns[:6]) == [
        "item_id", "prompt_id", "t2i_model", "image", "variant", "status",
    ]  # fmt: skip
    by_key = {(r.item_id, r.variant): r for r in items.itertuples()}
    for line in lines:
        row = by_key[(line["item_id"], line["variant"])]
        assert row.status == line["status"]
        assert (math.isnan(row.score) and line["score"] is None) or row.score == line["score"]
        assert row.rationale == line["rationale"] and row.description == line["description"]
        assert row.tokens_in == line["tokens_in"] and row.cached == line["cached"]
    llm = items[items.variant == "llm"]
    assert set(llm[llm.status == "fallback"].t2i_model) == {failing_model}
    assert (llm.status == "fallback").sum() == (llm.t2i_model == failing_model).sum()


def test_metrics_frame_is_metrics_json(modes_run):
    metrics = _metrics_json(modes_run)["variants"]
    frame = titjudge.load_run(modes_run).metrics.set_index("variant")
    assert set(frame.index) == set(metrics)
    for name, entry in metrics.items():
        row = frame.loc[name]
        for key in ("pairwise_accuracy", "n_pairs", "n_correct", "srcc", "krcc", "ndcg"):
            assert row[key] == entry[key], (name, key)
        assert [row.pairwise_accuracy_ci_low, row.pairwise_accuracy_ci_high] == entry["ci"][
            "pairwise_accuracy"
        ]
        assert row.kind == entry["provenance"]["kind"]


def test_metrics_frame_says_whose_scores_they_are(modes_run, dead_judge_run):
    # summary.json's origins beside each variant's numbers
    frame = titjudge.load_run(modes_run).metrics.set_index("variant")
    assert (
        frame.loc["llm", "fallback_share"] == 0.25 and frame.loc["lexical", "fallback_share"] == 0
    )
    assert not frame.loc["llm", "model_stopped"]
    dead = titjudge.load_run(dead_judge_run)
    frame = dead.metrics.set_index("variant")
    assert frame.loc["tit_llm", "fallback_share"] == 1.0 and frame.loc["tit_llm", "model_stopped"]
    assert math.isnan(frame.loc["tit_llm", "pairwise_accuracy"])  # no number of its own
    # and its pairs: none counted as its own (pairs.groupby(...).correct.mean() agrees)
    pairs = dead.pairs
    assert pairs[pairs.variant == "tit_llm"].correct.isna().all()
    assert set(pairs[pairs.variant == "tit_llm"].outcome) <= {"failed", "human_tie"}


def test_re_evaluating_the_run_reproduces_metrics_json(modes_run):
    # the frames, breakdowns and compare evaluate subsets of the run this way
    record = titjudge.load_run(modes_run)
    again = record.analysis().metrics_on().metrics_json()
    written = _metrics_json(modes_run)
    for name, entry in written["variants"].items():
        # the run adds provenance and repeat spreads; the numbers are evaluate's
        added = ("provenance", "repeats")
        assert {k: v for k, v in entry.items() if k not in added} == {
            k: v for k, v in again["variants"][name].items() if k not in added
        }
    assert again["comparisons"] == written["comparisons"]


def test_config_is_the_run_file_as_a_dict_and_summary_it_typed(modes_run):
    record = titjudge.load_run(modes_run)
    assert record.config.name == "modes"
    assert [j.name for j in record.config.judges] == ["lexical", "llm", "check", "pair"]
    assert record.summary is not None
    assert record.summary.summary_json() == json.loads((modes_run / "summary.json").read_text())


def test_load_runs_stacks_frames_with_a_run_column(offline_runs):
    # `<run.out>/*/*`, as the Python API page writes it: it matches each config folder's
    # LATEST file too, which is skipped (issue 48: it raised DataError)
    pattern = str(offline_runs.base.parent.parent / "*" / "*")
    assert any(p.endswith("LATEST") for p in __import__("glob").glob(pattern))
    runs = titjudge.load_runs(pattern)
    assert len(runs) == 3
    metrics = runs.metrics
    assert list(metrics.columns[:2]) == ["run", "variant"]
    assert set(metrics.run) == {
        p.name for p in (offline_runs.base, offline_runs.worse, offline_runs.small)
    }
    pairs = runs.pairs
    small = pairs[pairs.run == offline_runs.small.name]
    assert (
        small.correct.mean()
        == _metrics_json(offline_runs.small)["variants"]["lexical"]["pairwise_accuracy"]
    )
    with pytest.raises(titjudge.errors.DataError, match="no run matches"):
        titjudge.load_runs(str(offline_runs.base.parent / "nothing-*"))


def test_without_pandas_a_frame_is_one_clear_error_and_the_record_still_loads(
    offline_runs, monkeypatch
):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    record = titjudge.load_run(offline_runs.base)
    assert record.variants["lexical"].n_pairs > 0
    with pytest.raises(MissingDependencyError, match=r"need pandas.*\[analysis\]"):
        _ = record.pairs


def test_loading_a_record_imports_no_pandas(offline_runs):
    import subprocess

    probe = (
        "import sys, titjudge; r = titjudge.load_run(sys.argv[1]); r.variants; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'pyarrow', 'matplotlib')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(offline_runs.base)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"
