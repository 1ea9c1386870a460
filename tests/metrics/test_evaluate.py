"""`evaluate`: the full summary on a tiny hand case, JSON safety, empty input, speed."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from titjudge.errors import DataError
from titjudge.files import to_json
from titjudge.metrics.catalog import ci_metrics
from titjudge.metrics.summary import MetricSettings
from titjudge.metrics.summary import metrics_record as evaluate_record
from titjudge.records.items import HumanPair, Item, RankRow, ScoreRow

PAIRS = [
    HumanPair("p1", "a", "b", "a"),
    HumanPair("p1", "a", "c", "a"),
    HumanPair("p1", "b", "c", "a"),
    HumanPair("p2", "d", "e", "b"),
    HumanPair("p2", "d", "f", "tie"),
    HumanPair("p2", "e", "f", "a"),
]
RANKS = [
    RankRow("p1", "a", 1),
    RankRow("p1", "b", 2),
    RankRow("p1", "c", 3),
    RankRow("p2", "e", 1),
    RankRow("p2", "d", 2.5),
    RankRow("p2", "f", 2.5),
]
ITEMS = [
    Item(i, p, "prompt", Path(f"/img/{i}.png"), m)
    for i, p, m in [
        ("a", "p1", "X"),
        ("b", "p1", "Y"),
        ("c", "p1", "Z"),
        ("d", "p2", "X"),
        ("e", "p2", "Y"),
        ("f", "p2", "Z"),
    ]
]
SCORES = [
    ScoreRow("a", "good", 3.0, "ok"),
    ScoreRow("b", "good", 2.0, "ok"),
    ScoreRow("c", "good", 1.0, "ok"),
    ScoreRow(
        "d", "good", 1.0, "ok"
    ),  # a fallback row brings the fallback rule: test_fallback_scales
    ScoreRow("e", "good", 2.0, "ok"),
    ScoreRow("f", "good", 0.0, "ok"),
    ScoreRow("a", "flat", 1.0, "ok"),
    ScoreRow("b", "flat", 1.0, "ok"),
    ScoreRow("c", "flat", None, "failed"),
    ScoreRow("d", "flat", 1.0, "ok"),
    ScoreRow("e", "flat", 1.0, "ok"),
    ScoreRow("f", "flat", 1.0, "ok"),
]


def evaluate(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """What metrics.json (and `metrics --json`) holds for these arguments."""
    return evaluate_record(*args, **kwargs).metrics_json()


def test_hand_case_summary() -> None:
    out = evaluate(SCORES, PAIRS, RANKS, ITEMS, settings=MetricSettings(bootstrap=200, seed=1))
    good, flat = out["variants"]["good"], out["variants"]["flat"]
    assert (good["pairwise_accuracy"], good["n_pairs"], good["n_pairs_skipped"]) == (1.0, 5, 0)
    assert (good["n_items"], good["n_failed"], good["n_fallback"], good["n_human_ties"]) == (
        6,
        0,
        0,
        1,
    )
    assert good["p_value"] == pytest.approx(1 / 32)
    # p2 by hand: rho = 1.5 / sqrt(2 * 1.5), tau-b = 2 / sqrt(3 * 2); p1 is perfect
    assert good["srcc"] == pytest.approx((1 + 1.5 / math.sqrt(3)) / 2)
    assert good["krcc"] == pytest.approx((1 + 2 / math.sqrt(6)) / 2)
    assert good["ndcg"] == pytest.approx(1.0)
    assert good["ci"]["pairwise_accuracy"] == [1.0, 1.0]

    # flat: every evaluated pair is a metric tie, c failed so two pairs are skipped
    assert (flat["pairwise_accuracy"], flat["n_pairs"], flat["n_pairs_skipped"]) == (0.0, 3, 2)
    assert (flat["metric_tie_rate"], flat["n_failed"], flat["p_value"]) == (1.0, 1, 1.0)
    assert (flat["srcc"], flat["krcc"], flat["n_prompts"], flat["n_prompts_skipped"]) == (
        None,
        None,
        0,
        2,
    )
    assert flat["ci"]["srcc"] is None
    assert flat["thresholds"]["n_pairs"] == 3

    assert out["thresholds"]["n_pairs"] == 5  # the largest n_pairs of any variant
    [comparison] = out["comparisons"]
    assert (comparison["variant_a"], comparison["variant_b"], comparison["n_pairs"]) == (
        "flat",
        "good",
        3,
    )
    assert (comparison["a_only"], comparison["b_only"], comparison["p_value"]) == (
        0,
        3,
        pytest.approx(0.25),
    )
    # human average ranks X 1.75, Y 1.5, Z 2.75; good's X 1.5, Y 1.5, Z 3
    assert out["leaderboard"]["models"] == ["Y", "X", "Z"]
    # every standing is written in that order, the human ranking's
    assert list(out["leaderboard"]["human"]) == ["Y", "X", "Z"]
    assert list(out["leaderboard"]["variants"]["good"]["models"]) == ["Y", "X", "Z"]
    assert out["leaderboard"]["human"]["X"] == {"average_rank": 1.75, "rank": 2.0, "n_prompts": 2}
    assert good["leaderboard_srcc"] == pytest.approx(1.5 / math.sqrt(3))
    assert out["notes"] == []
    assert out["settings"]["gain"] == "linear" and out["settings"]["bootstrap"] == 200


def test_json_has_null_not_nan_and_no_leaderboard_without_items() -> None:
    record = evaluate_record(
        SCORES, PAIRS, RANKS, None, settings=MetricSettings(bootstrap=50, seed=0)
    )
    # the record itself holds None for an undefined metric, not NaN, and no unset block
    assert record.variants["flat"].srcc is None and record.variants["flat"].krcc is None
    assert record.variants["good"].leaderboard_srcc is None
    out = record.metrics_json()
    text = to_json(out)
    assert "NaN" not in text
    data = json.loads(text)
    assert data["variants"]["flat"]["srcc"] is None and data["leaderboard"] is None
    assert "leaderboard omitted" in data["notes"][0]
    assert "leaderboard_srcc" not in data["variants"]["good"]
    assert (
        to_json({"x": float("nan"), "y": [np.float64("inf"), np.int64(3)]}, indent=None)
        == '{"x": null, "y": [null, 3]}'
    )


def test_bootstrap_is_seeded_and_can_be_switched_off() -> None:
    first = evaluate(SCORES, PAIRS, RANKS, settings=MetricSettings(bootstrap=100, seed=5))
    assert (
        first["variants"]["good"]["ci"]
        == evaluate(SCORES, PAIRS, RANKS, settings=MetricSettings(bootstrap=100, seed=5))[
            "variants"
        ]["good"]["ci"]
    )
    off = evaluate(SCORES, PAIRS, RANKS, settings=MetricSettings(bootstrap=0))
    assert off["variants"]["good"]["ci"] == dict.fromkeys(ci_metrics())


def test_empty_input_is_defined() -> None:
    out = evaluate([], [], [])
    assert out["thresholds"] == {
        "n_pairs": 0,
        "mean": 0.0,
        "sd": 0.0,
        "k_95": None,
        "acc_95": None,
        "p_95": None,
        "k_999": None,
        "acc_999": None,
        "p_999": None,
    }
    assert out["comparisons"] == [] and out["leaderboard"] is None
    json.loads(to_json(out))
    only_failed = evaluate(
        [ScoreRow("a", "v", None, "failed")],
        PAIRS[:1],
        RANKS[:2],
        settings=MetricSettings(bootstrap=10),
    )
    v = only_failed["variants"]["v"]
    assert (v["pairwise_accuracy"], v["n_pairs"], v["n_pairs_skipped"], v["p_value"]) == (
        None,
        0,
        1,
        None,
    )
    assert v["ci"]["pairwise_accuracy"] is None


def test_bad_arguments_are_data_errors() -> None:
    # variants live under their own key: a variant named like a run-level key meets none
    named = evaluate(
        [ScoreRow("a", "thresholds", 1.0, "ok")], PAIRS, RANKS, settings=MetricSettings(bootstrap=0)
    )
    assert set(named["variants"]) == {"thresholds"} and named["thresholds"]["n_pairs"] == 0
    with pytest.raises(DataError, match="unknown gain 'cubic'"):
        evaluate(SCORES, PAIRS, RANKS, settings=MetricSettings(gain="cubic"))  # type: ignore[arg-type]
    with pytest.raises(DataError, match="--bootstrap must be >= 0"):
        evaluate(SCORES, PAIRS, RANKS, settings=MetricSettings(bootstrap=-1))


def test_round_digits_creates_metric_ties() -> None:
    rows = [ScoreRow("a", "v", 0.71, "ok"), ScoreRow("b", "v", 0.69, "ok")]
    assert (
        evaluate(rows, PAIRS[:1], [], settings=MetricSettings(bootstrap=0))["variants"]["v"][
            "pairwise_accuracy"
        ]
        == 1.0
    )
    rounded = evaluate(rows, PAIRS[:1], [], settings=MetricSettings(bootstrap=0, round_digits=1))[
        "variants"
    ]["v"]
    assert (rounded["pairwise_accuracy"], rounded["metric_tie_rate"]) == (0.0, 1.0)


def lpg_sized(seed: int = 0) -> tuple[list[ScoreRow], list[HumanPair], list[RankRow], list[Item]]:
    """200 prompts x 13 models, 12,832 non-tie pairs, 4 variants of decreasing quality."""
    rng = np.random.default_rng(seed)
    n_prompts, n_models = 200, 13
    quality = rng.normal(size=(n_prompts, n_models))
    ids = [[f"p{p}m{m}" for m in range(n_models)] for p in range(n_prompts)]
    every = [
        (p, a, b) for p in range(n_prompts) for a, b in itertools.combinations(range(n_models), 2)
    ]
    chosen = rng.choice(len(every), size=12_832, replace=False)
    pairs = [
        HumanPair(f"p{p}", ids[p][a], ids[p][b], "a" if quality[p, a] > quality[p, b] else "b")
        for p, a, b in (every[i] for i in sorted(chosen))
    ]
    ranks = [
        RankRow(f"p{p}", ids[p][m], float(r))
        for p in range(n_prompts)
        for m, r in enumerate(np.argsort(np.argsort(-quality[p])) + 1)
    ]
    items = [
        Item(ids[p][m], f"p{p}", "x", Path("/x.png"), f"M{m}")
        for p in range(n_prompts)
        for m in range(n_models)
    ]
    scores = [
        ScoreRow(ids[p][m], f"v{v}", None, "failed")
        if rng.random() < 0.01
        else ScoreRow(
            ids[p][m], f"v{v}", round(float(quality[p, m] + rng.normal(scale=noise)), 2), "ok"
        )
        for v, noise in enumerate((0.3, 1.0, 3.0, 30.0))
        for p in range(n_prompts)
        for m in range(n_models)
    ]
    return scores, pairs, ranks, items


@pytest.mark.slow
def test_lpg_sized_evaluation_is_ordered() -> None:
    """At LPG-Bench's size the metrics order the variants by their noise (the evaluator's
    speed is benchmark 1's `--time-eval`, not a bound here: the suite runs under load)."""
    scores, pairs, ranks, items = lpg_sized()
    out = evaluate(scores, pairs, ranks, items, settings=MetricSettings(bootstrap=1000, seed=0))
    accuracies = [out["variants"][f"v{v}"]["pairwise_accuracy"] for v in range(4)]
    assert accuracies == sorted(accuracies, reverse=True)
    assert out["variants"]["v0"]["pairwise_accuracy"] > out["thresholds"]["acc_999"]
    assert out["variants"]["v0"]["n_pairs"] + out["variants"]["v0"]["n_pairs_skipped"] == 12_832
    assert (
        out["variants"]["v3"]["srcc"] < out["variants"]["v0"]["srcc"]
        and len(out["comparisons"]) == 6
    )
    low, high = out["variants"]["v0"]["ci"]["pairwise_accuracy"]
    assert low < out["variants"]["v0"]["pairwise_accuracy"] < high
