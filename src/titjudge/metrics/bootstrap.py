"""Percentile bootstrap confidence intervals, resampling prompts with replacement.

Prompts, not pairs, are the resampling unit: the pairs of one prompt share images and
are not independent. A resample is stored as a count per prompt (how often it was
drawn), so every statistic that is a ratio of per-prompt sums (pairwise accuracy =
sum of correct / sum of pairs; a mean over defined prompts = sum of values / number
of defined prompts) is one matrix product for all resamples at once. The same count
matrix serves every variant, so their intervals are paired.
"""

from __future__ import annotations

import numpy as np

from titjudge.metrics.tables import PromptValues


def resample_counts(n_prompts: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n_prompts) draw counts; each row is one bootstrap sample of prompts."""
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be >= 0, got {n_resamples}")
    rng = np.random.default_rng(seed)
    if n_prompts == 0 or n_resamples == 0:
        return np.zeros((n_resamples, n_prompts))
    draws = rng.multinomial(n_prompts, np.full(n_prompts, 1.0 / n_prompts), size=n_resamples)
    return draws.astype(np.float64)


def ratio_interval(
    numerators: np.ndarray,
    denominators: np.ndarray,
    counts: np.ndarray,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile interval of sum(num) / sum(den) over resamples of prompts.

    Resamples whose denominator is 0 (no usable prompt drawn) are dropped; None when
    no resample defines the statistic.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if counts.size == 0:
        return None
    num = counts @ np.asarray(numerators, dtype=np.float64)
    den = counts @ np.asarray(denominators, dtype=np.float64)
    defined = den > 0
    if not defined.any():
        return None
    stats = num[defined] / den[defined]
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def mean_interval(
    values: PromptValues, counts: np.ndarray, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Interval of the mean over defined prompts (skipped prompts stay skipped)."""
    valid = values.valid
    return ratio_interval(np.where(valid, values.values, 0.0), valid, counts, confidence)
