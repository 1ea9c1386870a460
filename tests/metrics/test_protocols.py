"""The public sets' own measures (`metrics.protocols`) against their definitions: scipy's
spearmanr / kendalltau / pearsonr and curve_fit (the oracles the sets' own scripts call), and
HPSv2's inversion score and PickScore's tie-aware score worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from scipy.optimize import curve_fit

from titjudge.metrics.protocols import (
    ProtocolInput,
    inversion_score,
    kendall_tau_b,
    logistic_plcc,
    mos_correlations,
    protocol_score,
    tie_aware_score,
)
from titjudge.metrics.tables import build_eval_data
from titjudge.records.items import HumanPair, RankRow


@pytest.mark.parametrize("seed", range(6))
def test_the_pooled_correlations_are_scipys_ties_included(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    x = rng.integers(0, 6, n).astype(float)  # an integer judge: many ties
    y = rng.integers(1, 10, n) / 2
    scores = {f"i{k}": float(v) for k, v in enumerate(x)}
    mos = {f"i{k}": float(v) for k, v in enumerate(y)}
    found = mos_correlations(scores, mos)
    assert found.value == pytest.approx(scipy.stats.spearmanr(x, y)[0], abs=1e-12)
    assert found.values["krcc"] == pytest.approx(scipy.stats.kendalltau(x, y)[0], abs=1e-12)
    assert found.values["plcc"] == pytest.approx(scipy.stats.pearsonr(x, y)[0], abs=1e-12)
    assert found.n == n and found.skipped == 0


def test_the_logistic_plcc_is_curve_fits_with_evalmuses_start():
    def logistic(x, b1, b2, b3, b4):
        return b2 + (b1 - b2) / (1 + np.exp(-(x - b3) / np.abs(b4)))

    rng = np.random.default_rng(3)
    x = rng.normal(size=400)
    y = np.clip(3 + 1.5 * np.tanh(2 * x) + rng.normal(scale=0.3, size=400), 1, 5)
    beta, _ = curve_fit(logistic, x, y, p0=[y.max(), y.min(), x.mean(), x.std()], maxfev=100000)
    expected = scipy.stats.pearsonr(y, logistic(x, *beta))[0]
    assert logistic_plcc(x, y) == pytest.approx(expected, abs=1e-7)
    # a logistic fit of a sigmoid-shaped relation correlates better than the raw scores
    assert logistic_plcc(x, y) > scipy.stats.pearsonr(x, y)[0]
    assert logistic_plcc(np.ones(5), np.arange(5.0)) is None  # constant scores


def test_an_image_the_judge_did_not_score_is_left_out_and_counted():
    found = mos_correlations({"a": 1.0, "b": 2.0, "c": math.nan}, {"a": 1, "b": 3, "c": 2, "d": 5})
    assert (found.n, found.skipped, found.value) == (2, 2, pytest.approx(1.0))
    assert kendall_tau_b(np.array([1.0, 1.0]), np.array([1.0, 2.0])) is None


def ranked(groups):
    rows = [RankRow(p, i, r) for p, ranking in groups.items() for i, r in ranking.items()]
    return build_eval_data([], rows)


def test_the_inversion_score_is_hpsv2s_with_a_judges_tie_half_discordant():
    data = ranked(
        {
            "p1": {"a": 1, "b": 2, "c": 2, "d": 4},  # b-c tied by people: never discordant
            "p2": {"e": 1, "f": 2, "g": 3},
            "p3": {"h": 1, "i": 2},  # i not scored: one image left, the prompt skipped
        }
    )
    scores = {"a": 4, "b": 1, "c": 2, "d": 2, "e": 1, "f": 2, "g": 3, "h": 5}
    found = inversion_score(data.score_vector(scores), data)
    # p1: b below d (1) and c tied with d (0.5) of 6 pairs: 0.75; p2 fully reversed: 0.0
    assert found.value == pytest.approx((0.75 + 0.0) / 2)
    assert (found.n, found.skipped) == (2, 1)


def test_the_tie_aware_score_is_pickscores_one_half_and_zero():
    pairs = [
        HumanPair("p1", "a", "b", "a"),  # judged right
        HumanPair("p2", "c", "d", "a"),  # judged wrong
        HumanPair("p3", "e", "f", "tie"),  # a human tie
    ]
    data = build_eval_data(pairs, [])
    vector = data.score_vector({"a": 0.9, "b": 0.1, "c": 0.5, "d": 0.6, "e": 0.3, "f": 0.35})
    found = tie_aware_score(vector, data)
    # threshold 0: 1 + 0 + 0.5 (the tie called a win); threshold 0.1: the c-d and e-f
    # differences (0.1, 0.05) become predicted ties: 1 + 0.5 + 1 = 2.5 of 3
    assert found.value == pytest.approx(1.5 / 3) and found.n == 3
    assert found.values["best_threshold_value"] == pytest.approx(2.5 / 3)
    assert found.values["best_threshold"] == pytest.approx(0.1)


def test_the_pairwise_measure_adds_no_number_of_its_own():
    data = build_eval_data([HumanPair("p", "a", "b", "a")], [])
    assert protocol_score(ProtocolInput("pairwise"), data.score_vector({}), data, {}) is None
