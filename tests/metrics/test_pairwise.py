"""Pairwise accuracy, metric-tie rate and tie calibration against hand-computed values."""

from __future__ import annotations

import pytest

from titjudge.metrics.pairwise import pairwise_accuracy, tie_calibrated_accuracy
from titjudge.records.items import HumanPair


def pair(a: str, b: str, winner: str, prompt: str = "p1") -> HumanPair:
    return HumanPair(prompt, a, b, winner)  # type: ignore[arg-type]


def test_hand_case_counts_ties_skips_and_human_ties() -> None:
    scores = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    pairs = [
        pair("a", "b", "a"),  # 3 > 2: correct
        pair("b", "c", "b"),  # 2 == 2: metric tie, not correct
        pair("c", "a", "b"),  # a preferred, listed second: 3 > 2, correct
        pair("a", "d", "b"),  # d preferred but 1 < 3: wrong
        pair("b", "d", "tie"),  # human tie: excluded
        pair("a", "e", "a"),  # e failed (absent): skipped
    ]
    result = pairwise_accuracy(scores, pairs)
    assert (result.n_pairs, result.n_correct, result.n_metric_ties) == (4, 2, 1)
    assert (result.n_pairs_skipped, result.n_human_ties) == (1, 1)
    assert result.accuracy == 0.5
    assert result.metric_tie_rate == 0.25


def test_all_metric_ties_score_zero_not_half() -> None:
    pairs = [pair("a", "b", "a"), pair("c", "d", "b")]
    result = pairwise_accuracy({"a": 7.0, "b": 7.0, "c": 7.0, "d": 7.0}, pairs)
    assert result.accuracy == 0.0
    assert result.metric_tie_rate == 1.0


def test_empty_input_gives_none_not_a_number() -> None:
    result = pairwise_accuracy({}, [])
    assert result.n_pairs == 0
    assert result.accuracy is None and result.metric_tie_rate is None
    only_failed = pairwise_accuracy({}, [pair("a", "b", "a")])
    assert (only_failed.n_pairs, only_failed.n_pairs_skipped, only_failed.accuracy) == (0, 1, None)


def test_rounding_defines_ties() -> None:
    pairs = [pair("a", "b", "a")]
    scores = {"a": 0.501, "b": 0.499}
    assert pairwise_accuracy(scores, pairs).accuracy == 1.0
    rounded = pairwise_accuracy(scores, pairs, round_digits=1)
    assert rounded.accuracy == 0.0 and rounded.n_metric_ties == 1


def test_tie_calibration_hand_case() -> None:
    # non-tie differences (preferred - other): +3, +1, -2; human-tie |differences|: 0.5, 2
    scores = {
        "w1": 3,
        "l1": 0,
        "w2": 1,
        "l2": 0,
        "w3": 0,
        "l3": 2,
        "t1": 0.5,
        "t2": 0,
        "t3": 2,
        "t4": 0,
    }
    pairs = [
        pair("w1", "l1", "a"),
        pair("l2", "w2", "b"),
        pair("w3", "l3", "a"),
        pair("t1", "t2", "tie"),
        pair("t3", "t4", "tie"),
    ]
    # eps=0: 2/5, eps=0.5: 3/5, eps=1: 2/5, eps=2: 3/5, eps=3: 2/5 -> smallest best eps 0.5
    result = tie_calibrated_accuracy({k: float(v) for k, v in scores.items()}, pairs)
    assert result.n_pairs == 5
    assert result.accuracy == pytest.approx(0.6)
    assert result.epsilon == 0.5


def test_tie_calibration_without_human_ties_equals_accuracy() -> None:
    scores = {"a": 2.0, "b": 1.0, "c": 1.0, "d": 5.0}
    pairs = [pair("a", "b", "a"), pair("b", "c", "a"), pair("c", "d", "a")]
    result = tie_calibrated_accuracy(scores, pairs)
    assert result.epsilon == 0.0
    assert result.accuracy == pytest.approx(pairwise_accuracy(scores, pairs).accuracy)
    assert tie_calibrated_accuracy({}, pairs).accuracy is None
