"""Exact McNemar between two variants on a hand-built discordant table."""

from __future__ import annotations

import pytest

from titjudge.metrics.compare import mcnemar_exact, mcnemar_from_outcomes
from titjudge.metrics.pairwise import pair_outcomes
from titjudge.metrics.tables import build_eval_data
from titjudge.records.items import HumanPair
from titjudge.records.run_record import Comparison


def compare_variants(
    scores_a: dict[str, float],
    scores_b: dict[str, float],
    pairs: list[HumanPair],
    names: tuple[str, str] = ("a", "b"),
) -> Comparison:
    """McNemar between two variants' scores on the human pairs, as the evaluator computes it
    (`pair_outcomes` of each, then `mcnemar_from_outcomes`)."""
    data = build_eval_data(pairs, [])
    outcomes_a = pair_outcomes(data.score_vector(scores_a), data)
    outcomes_b = pair_outcomes(data.score_vector(scores_b), data)
    return mcnemar_from_outcomes(names[0], outcomes_a, names[1], outcomes_b)


def build(
    correct_a: list[bool], correct_b: list[bool]
) -> tuple[dict[str, float], dict[str, float], list[HumanPair]]:
    """Pair i: w_i preferred over l_i; a variant is right on it iff it scores w_i higher."""
    pairs = [HumanPair("p", f"w{i}", f"l{i}", "a") for i in range(len(correct_a))]
    a = {f"w{i}": float(ok) for i, ok in enumerate(correct_a)} | {
        f"l{i}": float(not ok) for i, ok in enumerate(correct_a)
    }
    b = {f"w{i}": float(ok) for i, ok in enumerate(correct_b)} | {
        f"l{i}": float(not ok) for i, ok in enumerate(correct_b)
    }
    return a, b, pairs


def test_hand_built_table() -> None:
    # A right on pairs 0-7, B right on 0-2 and 8: both 3, A only 5, B only 1, neither 1
    correct_a = [i < 8 for i in range(10)]
    correct_b = [i < 3 or i == 8 for i in range(10)]
    a, b, pairs = build(correct_a, correct_b)
    result = compare_variants(a, b, pairs, names=("A", "B"))
    assert (result.both_correct, result.a_only, result.b_only, result.both_wrong) == (3, 5, 1, 1)
    assert result.n_pairs == 10
    # two-sided exact: P(X >= 5) + P(X <= 1) for X ~ Bin(6, .5) = (1 + 6 + 6 + 1) / 64
    assert result.p_value == pytest.approx(14 / 64, rel=1e-12)
    assert (result.accuracy_a, result.accuracy_b) == (0.8, 0.4)
    assert (result.variant_a, result.variant_b) == ("A", "B")


def test_only_pairs_both_variants_scored_count_and_ties_are_wrong() -> None:
    a, b, pairs = build([True, True, True], [True, False, True])
    del b["w2"]  # B failed on one image of pair 2: pair 2 is not shared
    a["l0"] = a["w0"]  # A ties pair 0: wrong
    result = compare_variants(a, b, pairs)
    assert result.n_pairs == 2
    assert (result.both_correct, result.a_only, result.b_only, result.both_wrong) == (0, 1, 1, 0)
    assert result.p_value == pytest.approx(1.0)


def test_no_discordance_and_no_shared_pairs() -> None:
    a, _, pairs = build([True, False], [True, False])
    same = compare_variants(a, dict(a), pairs)
    assert (same.a_only, same.b_only, same.p_value) == (0, 0, 1.0)
    none = compare_variants(a, {}, pairs)
    assert (none.n_pairs, none.p_value, none.accuracy_a) == (0, None, None)
    assert mcnemar_exact(0, 4) == pytest.approx(2 / 16)


@pytest.mark.slow
def test_fast_two_sided_p_equals_scipy_binomtest() -> None:
    from scipy.stats import binomtest

    for a_only in range(0, 25):
        for b_only in range(0, 25):
            if a_only + b_only:
                expected = binomtest(a_only, a_only + b_only, 0.5).pvalue
                assert mcnemar_exact(a_only, b_only) == pytest.approx(
                    expected, rel=1e-9, abs=1e-300
                )
    assert mcnemar_exact(6000, 5600) == pytest.approx(binomtest(6000, 11600, 0.5).pvalue, rel=1e-9)
