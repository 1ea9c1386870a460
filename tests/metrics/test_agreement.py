"""Krippendorff's alpha (nominal) and Fleiss' kappa against published worked examples."""

from __future__ import annotations

import pytest

from titjudge.metrics.agreement import fleiss_kappa, krippendorff_alpha_nominal

# Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011), the example with
# missing data: 4 observers, 12 units, values 1-5, "." = not coded. Nominal alpha = 0.743.
_ = None
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]

# Fleiss' kappa worked example (Wikipedia, "Fleiss' kappa", Worked example): 10 subjects,
# 14 raters each, 5 categories; counts n_ij per subject. P = 0.378, P_e = 0.213, kappa = 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def units_of(coders: list[list[int | None]]) -> list[list[int]]:
    return [[v for v in unit if v is not None] for unit in zip(*coders, strict=True)]


def test_krippendorff_alpha_nominal_matches_krippendorff_2011() -> None:
    alpha = krippendorff_alpha_nominal(units_of(KRIPPENDORFF_2011))
    assert alpha == pytest.approx(0.743, abs=5e-4)
    # the unit coded once (the last) carries no information: dropping it changes nothing
    assert krippendorff_alpha_nominal(units_of(KRIPPENDORFF_2011)[:-1]) == alpha


def test_fleiss_kappa_matches_the_worked_example() -> None:
    units = [[j for j, n in enumerate(row) for _ in range(n)] for row in FLEISS_TABLE]
    assert fleiss_kappa(units) == pytest.approx(0.210, abs=5e-4)


def test_small_case_by_hand() -> None:
    # 3 pairs, 2 annotators: (a, a), (b, b), (a, b). Coincidences: o_aa = 2, o_bb = 2,
    # o_ab = o_ba = 1; n_a = n_b = 3, n = 6: alpha = 1 - 5 * 2 / (2 * 3 * 3) = 4/9.
    # Fleiss: P_i = 1, 1, 0 -> P = 2/3; p_a = p_b = 1/2 -> P_e = 1/2; kappa = 1/3.
    units = [["a", "a"], ["b", "b"], ["a", "b"]]
    assert krippendorff_alpha_nominal(units) == pytest.approx(4 / 9)
    assert fleiss_kappa(units) == pytest.approx(1 / 3)


def test_undefined_cases_are_none_and_perfect_agreement_is_one() -> None:
    assert krippendorff_alpha_nominal([]) is None
    assert fleiss_kappa([["a"], ["b"]]) is None  # no unit with two labels
    assert krippendorff_alpha_nominal([["a", "a"], ["a", "a"]]) is None  # one category only
    assert fleiss_kappa([["tie", "tie", "tie"]]) is None
    perfect = [["a", "a", "a"], ["b", "b"], ["tie", "tie"]]
    assert krippendorff_alpha_nominal(perfect) == pytest.approx(1.0)
    assert fleiss_kappa(perfect) == pytest.approx(1.0)
