"""Cohen's kappa against hand-computed values (Cohen 1960's formula worked out below)."""

from __future__ import annotations

import numpy as np
import pytest

from titjudge.metrics.kappa import cohen_kappa, verdict_agreement, verdict_labels
from titjudge.metrics.pairwise import PairOutcomes


def test_two_by_two_table():
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = 35/50 = 0.7;
    # p_e = (25/50)(30/50) + (25/50)(20/50) = 0.3 + 0.2 = 0.5; kappa = 0.2 / 0.5 = 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-15)


def test_three_labels():
    # a: R R R W W T; b: R R W W T T -> agree on 4 of 6: p_o = 2/3
    # p_e = (3/6)(2/6) + (2/6)(2/6) + (1/6)(2/6) = (6 + 4 + 2) / 36 = 1/3; kappa = (1/3)/(2/3) = 0.5
    assert cohen_kappa(list("RRRWWT"), list("RRWWTT")) == pytest.approx(0.5, abs=1e-15)


def test_perfect_chance_and_undefined():
    assert cohen_kappa(list("abab"), list("abab")) == 1.0
    # independent: p_o = 1/2, p_e = 1/2 -> 0
    assert cohen_kappa(list("aabb"), list("abab")) == 0.0
    assert cohen_kappa([], []) is None
    assert cohen_kappa(list("aaa"), list("aaa")) is None  # p_e = 1: nothing to agree on
    with pytest.raises(ValueError, match="one label per item"):
        cohen_kappa(["a"], [])


def test_verdict_agreement_uses_the_pairs_both_evaluated():
    a = PairOutcomes(
        np.array([True, True, True, False]),
        np.array([True, False, False, False]),
        np.array([False, False, True, False]),
    )
    b = PairOutcomes(
        np.array([True, True, False, True]),
        np.array([True, True, False, True]),
        np.array([False, False, False, False]),
    )
    assert list(verdict_labels(a)) == ["right", "wrong", "tie", ""]
    found = verdict_agreement("a", a, "b", b)
    # pairs 0 and 1: (right, right), (wrong, right): p_o = 1/2, p_e = (1/2)(1) + (1/2)(0) = 1/2
    assert (found.n_pairs, found.n_agree, found.agreement, found.kappa) == (2, 1, 0.5, 0.0)
