"""Is a pairwise accuracy better than coin flipping?

Under random guessing each of n pairs is Bernoulli(0.5), so the number correct has
mean n/2 and sd sqrt(n)/2 (n = 12,832: mean 6,416, sd about 56.64). The TIT-Score paper
(appendix A.2) sets one-sided thresholds with that normal approximation and rounds the
count up: k = ceil(n/2 + z * sqrt(n)/2) correct pairs, reported as the accuracy k/n
(n = 12,832: 6,510 = 50.73% at 95%, 6,592 = 51.37% at 99.9%). We do the same, report
beside each k the exact one-sided binomial P(X >= k), and mark a metric significant at a
level exactly when its n_correct >= k, so the printed threshold and the mark never
disagree. A metric tie counts as wrong, which keeps the test conservative.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from titjudge.metrics.exact import binomtest_half
from titjudge.records.run_record import Thresholds

#: confidence levels the paper reports
PAPER_LEVELS: tuple[float, float] = (0.95, 0.999)


def threshold_count(n_pairs: int, confidence: float) -> int | None:
    """Smallest whole number of correct pairs at or above n/2 + z*sqrt(n)/2 (z one-sided)."""
    if n_pairs <= 0:
        return None
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    z = NormalDist().inv_cdf(confidence)
    return math.ceil(n_pairs / 2 + z * math.sqrt(n_pairs) / 2)


def significance_thresholds(n_pairs: int) -> Thresholds:
    """The paper's two thresholds for `n_pairs` (None counts when there are no pairs)."""
    k_95, k_999 = (threshold_count(n_pairs, level) for level in PAPER_LEVELS)
    return Thresholds(
        n_pairs=n_pairs,
        mean=n_pairs / 2,
        sd=math.sqrt(n_pairs) / 2,
        k_95=k_95,
        acc_95=None if k_95 is None else k_95 / n_pairs,
        p_95=_p_at(k_95, n_pairs),
        k_999=k_999,
        acc_999=None if k_999 is None else k_999 / n_pairs,
        p_999=_p_at(k_999, n_pairs),
    )


def _p_at(k: int | None, n_pairs: int) -> float | None:
    return None if k is None or k > n_pairs else binomial_p_value(k, n_pairs)


def significance_mark(n_correct: int, thresholds: Thresholds | None) -> str:
    """'**' when n_correct reaches the 99.9% count, '*' the 95% one, else ''. The marks
    compare whole counts, so they agree with the printed k/n thresholds by construction."""
    if thresholds is None:
        return ""
    if thresholds.k_999 is not None and n_correct >= thresholds.k_999:
        return "**"
    if thresholds.k_95 is not None and n_correct >= thresholds.k_95:
        return "*"
    return ""


def binomial_p_value(n_correct: int, n_pairs: int) -> float | None:
    """Exact one-sided P(X >= n_correct) for X ~ Binomial(n_pairs, 0.5); None for n = 0."""
    if n_pairs <= 0:
        return None
    if not 0 <= n_correct <= n_pairs:
        raise ValueError(f"n_correct={n_correct} must lie in [0, {n_pairs}]")
    return binomtest_half(n_correct, n_pairs, "greater")
