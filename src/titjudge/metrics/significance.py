"""Is a pairwise accuracy better than coin flipping?

Under random guessing each of n pairs is Bernoulli(0.5), so the number correct has
mean n/2 and sd sqrt(n)/2. The TIT-Score paper states one-sided thresholds with that
normal approximation (n = 12,832: mean 6,416, sd about 56.64); we report the same
thresholds as accuracies and, beside them, the exact one-sided binomial p-value.
A metric tie counts as wrong in both, which keeps the test conservative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import binomtest, norm

#: confidence levels the paper reports
PAPER_LEVELS: tuple[float, float] = (0.95, 0.999)


@dataclass(frozen=True)
class Thresholds:
    """Accuracy a metric must exceed on `n_pairs` pairs to beat chance at 95% / 99.9%."""

    n_pairs: int
    mean: float
    sd: float
    acc_95: float | None
    acc_999: float | None


def threshold_accuracy(n_pairs: int, confidence: float) -> float | None:
    """One-sided normal-approximation threshold as an accuracy: (n/2 + z*sqrt(n)/2) / n."""
    if n_pairs <= 0:
        return None
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    z = float(norm.ppf(confidence))
    return (n_pairs / 2 + z * math.sqrt(n_pairs) / 2) / n_pairs


def significance_thresholds(n_pairs: int) -> Thresholds:
    """The paper's two thresholds for `n_pairs` (None accuracies when there are no pairs)."""
    return Thresholds(
        n_pairs=n_pairs,
        mean=n_pairs / 2,
        sd=math.sqrt(n_pairs) / 2,
        acc_95=threshold_accuracy(n_pairs, PAPER_LEVELS[0]),
        acc_999=threshold_accuracy(n_pairs, PAPER_LEVELS[1]),
    )


def binomial_p_value(n_correct: int, n_pairs: int) -> float | None:
    """Exact one-sided P(X >= n_correct) for X ~ Binomial(n_pairs, 0.5); None for n = 0."""
    if n_pairs <= 0:
        return None
    if not 0 <= n_correct <= n_pairs:
        raise ValueError(f"n_correct={n_correct} must lie in [0, {n_pairs}]")
    return float(binomtest(n_correct, n_pairs, 0.5, alternative="greater").pvalue)
