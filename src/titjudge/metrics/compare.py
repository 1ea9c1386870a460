"""Is variant A's pairwise accuracy really different from variant B's? Exact McNemar.

Both variants judge the same human pairs, so their errors are paired: only the
discordant pairs (one right, the other wrong) carry evidence. Under the null each
discordant pair is equally likely to favour either variant, so the exact test is a
two-sided binomial test of `a_only` out of `a_only + b_only` at p = 0.5 (McNemar 1947,
exact form; same value as scipy.stats.binomtest, pinned by the tests). Only pairs
that both variants could score are used; a metric tie counts as wrong, as in pairwise
accuracy.
"""

from __future__ import annotations

import numpy as np

from titjudge.metrics.exact import binomtest_half
from titjudge.metrics.pairwise import PairOutcomes
from titjudge.records.run_record import Comparison


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value; 1.0 when there is no discordant pair (no evidence)."""
    if a_only + b_only == 0:
        return 1.0
    return binomtest_half(a_only, a_only + b_only)


def mcnemar_from_outcomes(
    name_a: str, outcomes_a: PairOutcomes, name_b: str, outcomes_b: PairOutcomes
) -> Comparison:
    """McNemar over the pairs both outcome sets evaluated (same `EvalData`)."""
    shared = outcomes_a.evaluated & outcomes_b.evaluated
    right_a, right_b = outcomes_a.correct[shared], outcomes_b.correct[shared]
    a_only = int(np.sum(right_a & ~right_b))
    b_only = int(np.sum(~right_a & right_b))
    n_pairs = int(shared.sum())
    both_correct = int(np.sum(right_a & right_b))
    return Comparison(
        variant_a=name_a,
        variant_b=name_b,
        n_pairs=n_pairs,
        both_correct=both_correct,
        a_only=a_only,
        b_only=b_only,
        both_wrong=int(np.sum(~right_a & ~right_b)),
        p_value=mcnemar_exact(a_only, b_only) if n_pairs else None,
        # each variant's accuracy on the pairs both were counted on
        accuracy_a=(both_correct + a_only) / n_pairs if n_pairs else None,
        accuracy_b=(both_correct + b_only) / n_pairs if n_pairs else None,
    )
