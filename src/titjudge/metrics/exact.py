"""Binomial tails at p = 1/2 and average ranks, without importing scipy.

The metrics need only a few of scipy.stats' functions, and importing scipy.stats
costs more than a second of every run, a fully cached re-run included; importing
scipy.special alone still costs about 0.35 s. These replacements use the standard
library and numpy, and the tests pin each against the scipy.stats function it
replaces:

- `binom_half_cdf(k, n)` is `scipy.stats.binom.cdf(k, n, 0.5)`;
- `binomtest_half(k, n, alternative)` is `scipy.stats.binomtest(k, n, 0.5, alternative).pvalue`;
- `rank_average(values)` is `scipy.stats.rankdata(values, method="average")`;
- `wilcoxon_signed_rank(differences)` is `scipy.stats.wilcoxon(differences).pvalue` where
  scipy computes it exactly (n <= 50 non-zero differences, no ties among their sizes) and
  where it approximates (n > EXACT_WILCOXON_N: `method="approx"`, `correction=False`); in
  between, and with tied sizes, it is the exact sign-flip distribution of the midranks,
  which scipy approximates by the normal (pinned against an enumeration of every sign).

(`statistics.NormalDist().inv_cdf` stands in for `scipy.stats.norm.ppf`, and
`metrics.correlation.spearman_rho` for `scipy.stats.spearmanr`.)

A binomial tail is summed term by term from its largest term outwards. That term
comes from Loader's saddle-point form of the binomial probability (C. Loader, "Fast
and accurate computation of binomial probabilities", 2000; R's `dbinom`), which
keeps ~1e-15 relative accuracy where a difference of log-factorials would lose
digits to cancellation; each further term is the previous one times i / (n - i + 1).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
#: Stirling series coefficients 1/12, 1/360, 1/1260, 1/1680, 1/1188
_S0, _S1, _S2, _S3, _S4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
#: a tail sum stops once what is left cannot change it: below 2**-60 of the sum
_NEGLIGIBLE = 2.0**-60


def _stirling_error(n: int) -> float:
    """log(n!) - log(sqrt(2 pi n) (n / e)**n), for n >= 1."""
    if n <= 15:  # log(n!) is small and exact enough here; the series needs larger n
        return math.lgamma(n + 1) - (n + 0.5) * math.log(n) + n - _HALF_LOG_2PI
    nn = float(n) * n
    return (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / n


def _deviance(x: float, mean: float) -> float:
    """x log(x / mean) + mean - x, without cancellation when x is near the mean."""
    if abs(x - mean) >= 0.1 * (x + mean):
        return x * math.log(x / mean) + mean - x
    v = (x - mean) / (x + mean)
    total, term = (x - mean) * v, 2 * x * v
    j = 1
    while True:  # the series in v**2 converges fast: |v| < 0.1
        term *= v * v
        following = total + term / (2 * j + 1)
        if following == total:
            return total
        total, j = following, j + 1


def _pmf_half(k: int, n: int) -> float:
    """P(X = k) for X ~ Binomial(n, 1/2), 0 <= k <= n (Loader's saddle-point form)."""
    if k in (0, n):
        return math.ldexp(1.0, -n)
    mean = n / 2
    exponent = (
        _stirling_error(n)
        - _stirling_error(k)
        - _stirling_error(n - k)
        - _deviance(k, mean)
        - _deviance(n - k, mean)
    )
    return math.exp(exponent) * math.sqrt(n / (2 * math.pi * k * (n - k)))


def _lower_tail(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2) and 0 <= k < n / 2 (terms shrink below k)."""
    term = _pmf_half(k, n)
    total = term
    for i in range(k, 0, -1):
        ratio = i / (n - i + 1)  # P(X = i - 1) / P(X = i), smaller for every later i
        term *= ratio
        total += term
        # all later terms together are below term * ratio / (1 - ratio)
        if term * ratio < _NEGLIGIBLE * total * (1 - ratio):
            break
    return total


def binom_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): equals scipy.stats.binom.cdf(k, n, 0.5).

    0.0 for k < 0 and 1.0 for k >= n (n = 0 included). The shorter tail is summed
    and, above the median, the other tail subtracted from 1, using the symmetry
    P(X <= k) = 1 - P(X <= n - k - 1).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if 2 * k + 1 == n:  # the median of an odd n splits the mass exactly in half
        return 0.5
    if 2 * k < n:
        return _lower_tail(k, n)
    return 1.0 - _lower_tail(n - k - 1, n)


def binomtest_half(
    k: int, n: int, alternative: Literal["two-sided", "greater"] = "two-sided"
) -> float:
    """Exact binomial test p-value of k successes in n trials against p = 1/2.

    Equals scipy.stats.binomtest(k, n, 0.5, alternative=alternative).pvalue:
    "greater" is P(X >= k) = P(X <= n - k) by symmetry; "two-sided" sums the
    probabilities no larger than P(X = k), which at p = 1/2 are the two tails beyond
    min(k, n - k) and its mirror image, 2 * P(X <= min(k, n - k)) capped at 1.
    Raises ValueError for n < 1 or k outside [0, n], as scipy does.
    """
    if n < 1:
        raise ValueError(f"n must be a positive integer, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"k must lie in [0, {n}], got {k}")
    if alternative == "greater":
        return binom_half_cdf(n - k, n)
    return min(1.0, 2.0 * binom_half_cdf(min(k, n - k), n))


def rank_average(values: np.ndarray) -> np.ndarray:
    """1-based ranks of a 1-D array, ties given the mean of the ranks they span.

    Equals scipy.stats.rankdata(values, method="average"), NaN included: any NaN
    makes every rank NaN, as scipy's default nan_policy="propagate" does.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if np.isnan(x).any():
        return np.full(x.size, np.nan)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]  # where each tie group starts
    group = np.cumsum(first) - 1
    # tie group g holds sorted positions bounds[g] .. bounds[g + 1] - 1 (0-based)
    bounds = np.r_[np.flatnonzero(first), x.size]
    ranks = np.empty(x.size)
    ranks[order] = 0.5 * (bounds[group] + 1 + bounds[group + 1])
    return ranks


#: non-zero differences up to which `wilcoxon_signed_rank` is exact (its distribution has
#: at most n (n + 1) + 1 states of doubled ranks: 40,201 at 200)
EXACT_WILCOXON_N = 200


def wilcoxon_signed_rank(differences: np.ndarray | list[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test that paired differences are
    symmetric about 0 (no systematic shift), zeros dropped (Wilcoxon's own treatment).

    The statistic is T+, the sum of the midranks of |d| over the positive d. Under the null
    every sign is +/- with probability 1/2 independently, given the ranks: up to
    EXACT_WILCOXON_N non-zero differences that distribution is computed exactly (doubled
    midranks are integers, so ties stay exact) and p = min(1, 2 min(P(T+ <= t), P(T+ >= t)));
    above, the normal approximation with the tie-corrected variance, no continuity
    correction. 1.0 when no difference is non-zero (nothing moved)."""
    d = np.asarray(differences, dtype=np.float64).ravel()
    d = d[d != 0]
    n = d.size
    if n == 0:
        return 1.0
    ranks = rank_average(np.abs(d))
    t_plus = float(ranks[d > 0].sum())
    if n > EXACT_WILCOXON_N:
        mean = n * (n + 1) / 4
        _, counts = np.unique(ranks, return_counts=True)
        var = n * (n + 1) * (2 * n + 1) / 24 - float((counts**3 - counts).sum()) / 48
        if var <= 0:
            return 1.0
        z = (t_plus - mean) / math.sqrt(var)
        return min(1.0, math.erfc(abs(z) / math.sqrt(2)))
    doubled = np.rint(2 * ranks).astype(np.int64)
    dist = np.zeros(int(doubled.sum()) + 1)
    dist[0] = 1.0
    top = 0
    for r in doubled.tolist():  # each rank's sign: its share added to T+, or not
        moved = dist[: top + 1].copy()
        dist[: top + 1] *= 0.5
        dist[r : r + top + 1] += 0.5 * moved
        top += r
    observed = round(2 * t_plus)
    lower, upper = float(dist[: observed + 1].sum()), float(dist[observed:].sum())
    return min(1.0, 2.0 * min(lower, upper))
