"""Chance thresholds (the paper's normal approximation) and exact binomial p-values."""

from __future__ import annotations

import math

import pytest

from titjudge.metrics.significance import binomial_p_value, significance_thresholds


def test_paper_thresholds_for_12832_pairs() -> None:
    t = significance_thresholds(12_832)
    assert t.mean == 6_416
    assert t.sd == pytest.approx(56.64, abs=0.005)  # paper: "about 56.64"
    # 6416 + 1.644854 * 56.6392 = 6509.16 correct pairs; 6416 + 3.090232 * 56.6392 = 6591.03
    assert t.acc_95 * 12_832 == pytest.approx(6_509.16, abs=0.01)
    assert t.acc_999 * 12_832 == pytest.approx(6_591.03, abs=0.01)
    assert t.acc_95 == pytest.approx(0.507260, abs=1e-6)
    assert t.acc_999 == pytest.approx(0.513640, abs=1e-6)


def test_thresholds_without_pairs_are_none() -> None:
    t = significance_thresholds(0)
    assert t.acc_95 is None and t.acc_999 is None


def test_exact_binomial_p_values_by_hand() -> None:
    # P(X >= 8 | n=10, p=.5) = (C(10,8) + C(10,9) + C(10,10)) / 2^10 = 56 / 1024
    assert binomial_p_value(8, 10) == pytest.approx(56 / 1024, rel=1e-12)
    assert binomial_p_value(0, 10) == pytest.approx(1.0)
    assert binomial_p_value(10, 10) == pytest.approx(1 / 1024, rel=1e-12)
    # at the paper's 95% threshold the exact p-value is close to 0.05
    p = binomial_p_value(math.ceil(6_509.16), 12_832)
    assert p is not None and 0.04 < p < 0.055


def test_binomial_edge_cases() -> None:
    assert binomial_p_value(0, 0) is None
    with pytest.raises(ValueError, match="n_correct"):
        binomial_p_value(11, 10)
