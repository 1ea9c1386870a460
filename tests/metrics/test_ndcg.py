"""nDCG: hand-computed values for both gains, tie averaging, top-k, skipped prompts."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest

from titjudge.metrics.ndcg import Gain, gains, ndcg_score, prompt_ndcg
from titjudge.metrics.tables import build_eval_data
from titjudge.records.items import RankRow


def mean_ndcg(
    scores: dict[str, float], ranks: list[RankRow], gain: Gain = "linear"
) -> SimpleNamespace:
    """Mean per-prompt nDCG of one variant's scores, as the evaluator computes it
    (`prompt_ndcg` over the run's `EvalData`)."""
    data = build_eval_data([], ranks)
    values = prompt_ndcg(data.score_vector(scores), data, gain)
    return SimpleNamespace(
        ndcg=values.mean, n_prompts=values.n_prompts, n_prompts_skipped=values.n_skipped
    )


LOG3 = math.log2(3)


def test_linear_gain_hand_case() -> None:
    rel = gains(np.array([1.0, 2.0, 3.0]), 3, "linear")
    assert list(rel) == [2.0, 1.0, 0.0]
    # metric order b, a, c: DCG = 1/1 + 2/log2(3); ideal = 2/1 + 1/log2(3)
    expected = (1 + 2 / LOG3) / (2 + 1 / LOG3)
    assert ndcg_score(np.array([0.5, 0.9, 0.1]), rel) == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.859719, abs=1e-6)


def test_exponential_gain_hand_case() -> None:
    rel = gains(np.array([1.0, 2.0, 3.0]), 3, "exponential")
    assert list(rel) == [3.0, 1.0, 0.0]
    expected = (1 + 3 / LOG3) / (3 + 1 / LOG3)
    assert ndcg_score(np.array([0.5, 0.9, 0.1]), rel) == pytest.approx(expected, abs=1e-12)


def test_metric_ties_average_over_orderings() -> None:
    rel = np.array([2.0, 1.0, 0.0])
    tied = ndcg_score(np.array([1.0, 1.0, 0.0]), rel)
    both_orders = [
        ndcg_score(np.array([1.0, 0.9, 0.0]), rel),
        ndcg_score(np.array([0.9, 1.0, 0.0]), rel),
    ]
    assert both_orders == [pytest.approx(1.0), pytest.approx((1 + 2 / LOG3) / (2 + 1 / LOG3))]
    assert tied == pytest.approx(sum(both_orders) / 2, abs=1e-12)
    # constant scores: every image gets the mean gain 1 at every position
    constant = ndcg_score(np.zeros(3), rel)
    assert constant == pytest.approx((1 + 1 / LOG3 + 0.5) / (2 + 1 / LOG3), abs=1e-12)
    # input order must not matter when scores tie
    assert ndcg_score(np.array([0.0, 1.0, 1.0]), rel[::-1].copy()) == pytest.approx(tied)


def test_top_k() -> None:
    rel = np.array([2.0, 1.0, 0.0])
    assert ndcg_score(np.array([0.5, 0.9, 0.1]), rel, k=1) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="k must be"):
        ndcg_score(np.array([0.5, 0.9]), rel[:2], k=0)


def test_undefined_prompts_are_nan() -> None:
    assert math.isnan(ndcg_score(np.array([1.0]), np.array([2.0])))
    assert math.isnan(ndcg_score(np.array([1.0, 2.0]), np.array([1.0, 1.0])))
    with pytest.raises(ValueError, match="unknown gain"):
        gains(np.array([1.0]), 1, "cubic")  # type: ignore[arg-type]


def test_mean_over_prompts_with_failed_item_and_skips() -> None:
    ranks = [
        RankRow("p1", "a", 1),
        RankRow("p1", "b", 2),
        RankRow("p1", "c", 3),
        # p2: the best image failed; gains still come from the 3-image ranking (b=1, c=0)
        RankRow("p2", "d", 1),
        RankRow("p2", "e", 2),
        RankRow("p2", "f", 3),
        RankRow("p3", "g", 1),  # one image: skipped
    ]
    scores = {"a": 0.5, "b": 0.9, "c": 0.1, "e": 0.0, "f": 1.0, "g": 3.0}
    p1 = (1 + 2 / LOG3) / (2 + 1 / LOG3)
    p2 = (0 + 1 / LOG3) / 1.0  # order f, e: gains 0 then 1
    result = mean_ndcg(scores, ranks)
    assert (result.n_prompts, result.n_prompts_skipped) == (2, 1)
    assert result.ndcg == pytest.approx((p1 + p2) / 2, abs=1e-12)
    assert mean_ndcg({}, []).ndcg is None


def test_competition_ranks_are_averaged_before_gains() -> None:
    # a file using 1,1,3 for a tie gets the same gains as 1.5,1.5,3
    scores = {"a": 1.0, "b": 2.0, "c": 3.0}
    competition = [RankRow("p", "a", 1), RankRow("p", "b", 1), RankRow("p", "c", 3)]
    fractional = [RankRow("p", "a", 1.5), RankRow("p", "b", 1.5), RankRow("p", "c", 3)]
    assert mean_ndcg(scores, competition).ndcg == pytest.approx(mean_ndcg(scores, fractional).ndcg)


def test_tie_averaging_equals_brute_force_over_orderings() -> None:
    """Average nDCG over every ordering consistent with the scores, for random small cases."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        n = int(rng.integers(2, 7))
        scores = rng.integers(0, 3, size=n).astype(float)
        rel = gains(rng.integers(1, n + 1, size=n).astype(float), n, "linear")
        if np.ptp(rel) == 0:
            continue
        k = None if rng.random() < 0.5 else int(rng.integers(1, n + 1))
        discount = np.array([1 / math.log2(i + 2) if k is None or i < k else 0.0 for i in range(n)])
        ideal = np.sort(rel)[::-1] @ discount
        consistent = [
            order
            for order in itertools.permutations(range(n))
            if np.all(np.diff(scores[list(order)]) <= 0)
        ]
        expected = np.mean([rel[list(order)] @ discount for order in consistent]) / ideal
        assert ndcg_score(scores, rel, k) == pytest.approx(expected, abs=1e-12)
