"""The audit's data model: verdicts, margins, order, filters and loading errors."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest
from audit_run import EXPECTED, PAIRS, SCORES

from titjudge.errors import DataError
from titjudge.records.item_line import ItemLine
from titjudge.records.items import HumanPair
from titjudge.report.audit.data import (
    OUTCOMES,
    any_variant_key,
    classify,
    disagreements,
    filter_pairs,
    find_pair,
    score_scale,
    sort_key,
    sorted_pairs,
)
from titjudge.report.audit.load import load_audit


def ids(pairs) -> list[int]:
    return [p.index for p in pairs]


def line(status: str, score: float | None) -> ItemLine:
    """One variant's items.jsonl line for an image: what the audit classifies pairs from."""
    return ItemLine.model_validate(
        {"item_id": "x", "prompt_id": "p", "t2i_model": "m", "variant": "v"}
        | {"status": status, "score": score}
    )


def test_every_verdict_and_margin_matches_the_hand_computed_table(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    assert data.variants == ["llm", "emb"]
    assert [(p.pair.item_a, p.pair.item_b, p.pair.winner) for p in data.pairs] == PAIRS
    for variant, expected in EXPECTED.items():
        got = [(p.verdicts[variant].outcome, p.verdicts[variant].margin) for p in data.pairs]
        assert [o for o, _ in got] == [o for o, _ in expected], variant
        for (_, margin), (_, want) in zip(got, expected, strict=True):
            assert margin == (None if want is None else pytest.approx(want)), variant


def test_fallback_scores_count_and_failed_sides_keep_the_other_score(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    fallback = data.items["P2_m2"].results["llm"]
    assert fallback.status == "fallback" and fallback.score == 0.6
    assert fallback.details == {"fallback_from": "emb"}
    failed_pair = data.pairs[3].verdicts["llm"]  # P2_m1 (failed) vs P2_m2 (fallback)
    assert (failed_pair.score_a, failed_pair.score_b, failed_pair.margin) == (None, 0.6, None)
    llm, emb = data.summaries["llm"], data.summaries["emb"]
    assert (llm.n_failed, llm.n_fallback, emb.n_failed, emb.n_fallback) == (1, 1, 0, 0)
    assert dict(llm.counts) == {
        "agree": 1,
        "disagree": 1,
        "metric_tie": 1,
        "failed": 2,
        "human_tie": 1,
    }
    assert dict(emb.counts) == {
        "agree": 3,
        "disagree": 2,
        "metric_tie": 0,
        "failed": 0,
        "human_tie": 1,
    }


def test_summary_takes_the_run_records_numbers(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    llm, emb = data.summaries["llm"], data.summaries["emb"]
    assert (llm.pairwise_accuracy, llm.ci, llm.metric_tie_rate) == (0.25, (0.1, 0.6), 0.5)
    assert (emb.pairwise_accuracy, emb.ci, emb.metric_tie_rate) == (0.6, None, 0.0)
    assert llm.provenance is not None and llm.provenance.template_sha256 == "ab" * 32
    assert emb.provenance is None  # not recorded: shown as such, never guessed
    assert llm.cost == pytest.approx(6 * 0.002) and emb.cost is None
    assert llm.scale == pytest.approx(statistics.pstdev([8, 5, 5, 0.6, 2]))


def test_most_confident_mistakes_first_per_variant(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    # llm: -3 (pair 3), 0 (pair 2), +3 (pair 1); then the human tie; then the two failures
    assert ids(sorted_pairs(data, data.pairs, "llm")) == [2, 1, 0, 4, 3, 5]
    # emb: -0.25, -0.15, +0.2, +0.2 (pair order breaks the tie), +0.4; then the human tie
    assert ids(sorted_pairs(data, data.pairs, "emb")) == [1, 2, 3, 5, 0, 4]


def test_across_variants_margins_are_divided_by_each_variants_spread(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    sd_llm = statistics.pstdev([8, 5, 5, 0.6, 2])
    sd_emb = statistics.pstdev([v for _, v in SCORES["emb"].values()])
    scales = {"llm": sd_llm, "emb": sd_emb}
    assert any_variant_key(data.pairs[2], scales) == pytest.approx(
        (0, min(-3 / sd_llm, -0.15 / sd_emb))
    )
    expected = sorted(range(6), key=lambda i: (*any_variant_key(data.pairs[i], scales), i))
    assert ids(sorted_pairs(data, data.pairs, None)) == expected
    assert expected[0] == 2  # -3 on a spread of ~2.6 beats -0.25 on ~0.23


def test_sort_key_groups_and_human_ties_widest_gap_first() -> None:
    pair = HumanPair("p", "x", "y", "tie")
    near = classify(pair, line("ok", 1.0), line("ok", 1.5))
    wide = classify(pair, line("ok", 1.0), line("ok", 4.0))
    assert near.outcome == wide.outcome == "human_tie" and wide.margin == -3.0
    assert sort_key(wide) < sort_key(near)
    assert sort_key(classify(HumanPair("p", "x", "y", "a"), None, line("ok", 1.0))) == (
        2,
        0.0,
    )


def test_round_digits_defines_metric_ties() -> None:
    pair = HumanPair("p", "x", "y", "a")
    a, b = line("ok", 0.70001), line("ok", 0.7)
    assert classify(pair, a, b).outcome == "agree"
    assert classify(pair, a, b, round_digits=3).outcome == "metric_tie"
    assert classify(pair, a, line("failed", None)).outcome == "failed"


def test_filters_and_their_option_lists(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    assert data.variants == ["llm", "emb"]  # what the filters choose from
    assert sorted({i.t2i_model for i in data.items.values()}) == ["m1", "m2", "m3"]
    assert sorted(data.prompts) == ["P1", "P2"]
    assert OUTCOMES == ("agree", "disagree", "metric_tie", "failed", "human_tie")
    assert ids(filter_pairs(data, "llm", "disagree")) == [2]
    assert ids(filter_pairs(data, "llm", "failed")) == [3, 5]
    assert ids(filter_pairs(data, None, "disagree")) == [1, 2]  # any variant
    assert ids(filter_pairs(data, t2i_model="m1")) == [0, 2, 3, 5]
    assert ids(filter_pairs(data, prompt_id="P2", outcome="human_tie")) == [4]
    assert ids(disagreements(data, "emb", limit=1)) == [1]
    with pytest.raises(DataError, match="no variant 'lm'.*did you mean 'llm'"):
        filter_pairs(data, "lm")


def test_find_pair_accepts_either_order_and_names_the_closest(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    assert find_pair(data, "P1_m3|P1_m1").index == 2
    with pytest.raises(
        DataError, match=r"no human pair 'P1-m1\|P1_m2'.*did you mean 'P1_m1\|P1_m2'"
    ):
        find_pair(data, "P1-m1|P1_m2")
    with pytest.raises(DataError, match="expected '<item_a>|<item_b>'"):
        find_pair(data, "P1_m1")


def test_score_scale() -> None:
    assert score_scale([2, 4, 4, 4, 5, 5, 7, 9]) == 2.0
    assert score_scale([3.0, 3.0]) == 1.0 and score_scale([1.0]) == 1.0


@pytest.mark.slow
def test_counts_agree_with_metrics_json_of_a_real_run(pipeline_run: Path) -> None:
    data = load_audit(pipeline_run)
    metrics = json.loads((pipeline_run / "metrics.json").read_text())["variants"]["lexical"]
    counts = data.summaries["lexical"].counts
    assert len(data.pairs) == 50  # 5 prompts x C(5, 2), every pair judged
    assert counts["agree"] == metrics["n_correct"]
    assert counts["metric_tie"] == metrics["n_metric_ties"]
    assert counts["human_tie"] == metrics["n_human_ties"]
    assert counts["agree"] + counts["disagree"] + counts["metric_tie"] == metrics["n_pairs"]
    assert data.summaries["lexical"].ci is not None


def _broken(handmade_run: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(handmade_run, run)
    return run


def test_loading_errors_are_one_clear_line(handmade_run: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a run dir"):
        load_audit(tmp_path)
    run = _broken(handmade_run, tmp_path)
    lines = (run / "items.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["status"] = "great"
    (run / "items.jsonl").write_text("\n".join([lines[0], json.dumps(bad)]) + "\n")
    with pytest.raises(
        DataError, match=r"items.jsonl:2: status must be one of ok, failed, fallback; got 'great'"
    ):
        load_audit(run)
    bad.update(status="failed", score=3)
    (run / "items.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(DataError, match=r"items.jsonl:1: status 'failed' must have score null"):
        load_audit(run)
    (run / "config.yaml").write_text("name: x\ndata: {manifest: m.jsonl}\n")
    with pytest.raises(DataError, match="config.yaml: data.manifest 'm.jsonl' not found"):
        load_audit(run)
    (run / "config.yaml").write_text("name: x\ndata: {manifest: m.jsonl, human_pairs: p.csv}\n")
    with pytest.raises(
        DataError, match=r"config.yaml: data.human_pairs 'p.csv' not found; relative paths"
    ):
        load_audit(run)


def test_pairs_outside_a_limited_run_are_counted_not_shown(
    handmade_run: Path, tmp_path: Path
) -> None:
    run = _broken(handmade_run, tmp_path)
    lines = (run / "items.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["prompt_id"] == "P1"]
    (run / "items.jsonl").write_text("\n".join(kept) + "\n")
    data = load_audit(run)
    assert (len(data.pairs), data.n_pairs_outside) == (3, 3)


def test_a_format_1_metrics_file_is_read_with_its_variants_moved(tmp_path: Path) -> None:
    """metrics.json written before the record (variants beside the run-level keys) still
    loads: its variants under `variants`, no provenance; a newer format is one clear line."""
    from titjudge.report.record import parse_record

    old = {"llm": {"pairwise_accuracy": 0.5, "n_pairs": 4}, "thresholds": {"n_pairs": 4}}
    record = parse_record(old, "metrics.json")
    assert record.version == 1 and record.variants["llm"].pairwise_accuracy == 0.5
    assert record.thresholds is not None and record.thresholds.n_pairs == 4
    assert record.thresholds.k_95 is None and record.variants["llm"].provenance is None
    with pytest.raises(DataError, match="metrics format 9 is not one this titjudge reads"):
        parse_record({"version": 9, "variants": {}}, "metrics.json")
