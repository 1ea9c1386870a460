"""Bootstrap over prompts: coverage and width on known Bernoulli data, seeding, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from titjudge.metrics.bootstrap import mean_interval, ratio_interval, resample_counts
from titjudge.metrics.tables import PromptValues


def test_counts_are_seeded_resamples_of_prompts() -> None:
    counts = resample_counts(50, 200, seed=3)
    assert counts.shape == (200, 50)
    assert np.all(counts.sum(axis=1) == 50)  # each resample draws n prompts
    assert np.array_equal(counts, resample_counts(50, 200, seed=3))
    assert not np.array_equal(counts, resample_counts(50, 200, seed=4))
    assert resample_counts(0, 10, seed=0).shape == (10, 0)


def test_bernoulli_mean_interval_covers_truth_with_expected_width() -> None:
    p, n = 0.7, 400
    outcomes = (np.random.default_rng(11).random(n) < p).astype(float)
    interval = ratio_interval(outcomes, np.ones(n), resample_counts(n, 4000, seed=0))
    assert interval is not None
    low, high = interval
    assert low < p < high
    # normal theory: width = 2 * 1.96 * sqrt(p (1 - p) / n) = 0.0898
    expected = 2 * 1.959964 * math.sqrt(outcomes.mean() * (1 - outcomes.mean()) / n)
    assert high - low == pytest.approx(expected, rel=0.1)
    assert (low + high) / 2 == pytest.approx(outcomes.mean(), abs=0.005)


def test_ratio_of_sums_weights_prompts_by_pairs() -> None:
    # one resample drawing prompt 0 twice and prompt 1 once: (2*3 + 1) / (2*4 + 2)
    counts = np.array([[2.0, 1.0, 0.0]])
    assert ratio_interval(np.array([3.0, 1.0, 9.0]), np.array([4.0, 2.0, 9.0]), counts) == (
        0.7,
        0.7,
    )


def test_undefined_resamples_are_dropped_and_empty_is_none() -> None:
    counts = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    # resample 2 draws only prompt 1, which has no pairs: dropped, not 0
    assert ratio_interval(np.array([1.0, 0.0]), np.array([1.0, 0.0]), counts) == (1.0, 1.0)
    assert ratio_interval(np.zeros(2), np.zeros(2), counts) is None
    assert ratio_interval(np.zeros(0), np.zeros(0), resample_counts(0, 5, seed=0)) is None
    with pytest.raises(ValueError, match="confidence"):
        ratio_interval(np.ones(2), np.ones(2), counts, confidence=1.5)


def test_mean_interval_skips_nan_prompts() -> None:
    values = PromptValues(np.array([0.5, np.nan, 0.5, np.nan]), np.ones(4, dtype=bool))
    assert mean_interval(values, resample_counts(4, 100, seed=1)) == (0.5, 0.5)
