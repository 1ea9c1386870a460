"""The metric catalog (`titjudge.metrics.catalog`) is the one list of metrics: `evaluate`
computes every metric it declares and an interval the way it declares, the run record types
every tabled metric with its counts, and a lower-is-better metric is marked by its lowest."""

from __future__ import annotations

from test_evaluate import ITEMS, PAIRS, RANKS, SCORES

from titjudge.ablation.tables import mark_best
from titjudge.metrics.catalog import ci_metrics, metrics, record_fields, repeat_metrics
from titjudge.metrics.summary import MetricSettings
from titjudge.metrics.summary import metrics_record as evaluate
from titjudge.records.run_record import VariantRecord


def test_evaluate_gives_every_declared_metric_with_its_interval_around_it() -> None:
    summary = evaluate(
        SCORES, PAIRS, RANKS, ITEMS, settings=MetricSettings(bootstrap=200, seed=3)
    ).metrics_json()
    checked = 0
    for name, entry in summary["variants"].items():
        assert {m.name for m in metrics()} <= set(entry), name
        assert set(entry["ci"]) == set(ci_metrics()), name
        for metric in metrics():
            if metric.stands_on is not None:
                assert isinstance(entry[metric.stands_on.name], int), metric.name
            interval, value = entry["ci"].get(metric.name), entry[metric.name]
            if interval is None or value is None:
                continue
            # a "pairs" interval counts the outcome the catalog names, a "prompts" one
            # averages the metric's own per-prompt values: either way it holds the value
            low, high = interval
            assert low <= value + 1e-12 and value <= high + 1e-12, (name, metric.name)
            checked += 1
    assert checked >= 4


def test_the_record_types_every_tabled_metric_and_the_counts_beside_it() -> None:
    declared = set(VariantRecord.model_fields)
    assert set(record_fields()) <= declared
    assert set(repeat_metrics()) <= {m.name for m in metrics()}
    record = evaluate(SCORES, PAIRS, RANKS, ITEMS, settings=MetricSettings(bootstrap=0)).variants[
        "good"
    ]
    assert record.n_prompts == 2 and record.n_prompts_ndcg == 2
    assert not set(record.model_extra or {}) & set(record_fields())


def test_every_field_evaluate_gives_is_declared_once_and_blocks_appear_where_they_apply():
    """`evaluate` makes the record itself (no dict validated afterwards): each variant field
    is a declared field of `VariantRecord` (an extra would be a metric named nowhere), and the
    blocks that apply only to some variants (pairwise, repeats, fallback counts, leaderboard
    SRCC) are absent from metrics.json where they do not apply, as before they were typed."""
    with_items = evaluate(SCORES, PAIRS, RANKS, ITEMS, settings=MetricSettings(bootstrap=0))
    without = evaluate(SCORES, PAIRS, RANKS, None, settings=MetricSettings(bootstrap=0))
    for record in (with_items, without):
        for variant in record.variants.values():
            assert not variant.model_extra  # no catalog metric is registered here
            assert variant.pairwise is None and variant.repeats is None
    assert with_items.variants["good"].leaderboard_srcc is not None
    written = with_items.metrics_json()["variants"]["good"]
    assert "leaderboard_srcc" in written and "pairwise" not in written
    assert "repeats" not in written and "n_pairs_mixed_source" not in written
    assert "leaderboard_srcc" not in without.metrics_json()["variants"]["good"]
    # flat's SRCC is undefined (its scores tie): None in the record, not NaN
    assert without.variants["flat"].srcc is None


def test_a_lower_is_better_metric_is_marked_by_its_lowest_value() -> None:
    values = [0.30, 0.10, None, 0.20, 0.10]
    assert mark_best(values, 2) == ["best", None, None, "second", None]
    assert mark_best(values, 2, lower=True) == [None, "best", None, "second", "best"]
