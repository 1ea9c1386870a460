"""The scipy-free binomial tails, ranks, Spearman and normal quantile equal scipy.stats'.

scipy stays installed (a dependency), so scipy.stats is the reference here.

Tolerances, from the measured gaps: the relative rounding error of both sides grows
with the size of the log-probability (an exponent of size L carries ~L * 1e-16), so
the tolerance depends on how small the probability is. For p >= 1e-20 the largest
gap to scipy over these grids is 1.3e-13, held to 1e-12; for 1e-300 <= p < 1e-20 it
is 1.8e-12 (p ~ 1e-168 at n = 12,832), held to 1e-11. Below 1e-300 both underflow
towards 0 and only that is asserted. Against exact rational arithmetic (n <= 200) the
largest error is 3.3e-14 (scipy's own: 1.5e-14), held to 1e-13.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import binom, binomtest, norm, rankdata, spearmanr, wilcoxon

from titjudge.metrics.correlation import spearman_rho
from titjudge.metrics.exact import (
    EXACT_WILCOXON_N,
    binom_half_cdf,
    binomtest_half,
    rank_average,
    wilcoxon_signed_rank,
)
from titjudge.metrics.significance import threshold_count

SMALL_N = range(0, 81)
LARGE_N = (
    101,
    999,
    1000,
    4001,
    *(pytest.param(n, marks=pytest.mark.slow, id=str(n)) for n in (11_600, 12_832, 50_001)),
)


def _ks(n: int) -> list[int]:
    """Every k for small n (and just outside [0, n]); for large n a spread plus the middle."""
    if n <= 80:
        return list(range(-2, n + 3))
    spread = range(0, n + 1, max(1, n // 120))
    return sorted({*spread, n // 2 - 1, n // 2, n // 2 + 1, 1, n - 1, n, n + 1, -1})


def _close(ours: float, theirs: float) -> None:
    if theirs < 1e-300:
        assert ours < 1e-290
    else:
        rel = 1e-12 if theirs >= 1e-20 else 1e-11
        assert ours == pytest.approx(theirs, rel=rel, abs=0.0)


def _exact_cdf(k: int, n: int) -> float:
    return float(Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n))


@pytest.mark.parametrize("n", [*SMALL_N, *LARGE_N])
def test_binom_half_cdf_equals_scipy_binom_cdf(n: int) -> None:
    ks = _ks(n)
    # one vectorised scipy call per n: element for element what the scalar call gives
    for k, theirs in zip(ks, binom.cdf(ks, n, 0.5).tolist(), strict=True):
        _close(binom_half_cdf(k, n), theirs)


def test_binom_half_cdf_edges_are_exact() -> None:
    assert (binom_half_cdf(-1, 5), binom_half_cdf(5, 5), binom_half_cdf(9, 5)) == (0.0, 1.0, 1.0)
    assert (binom_half_cdf(0, 0), binom_half_cdf(-1, 0)) == (1.0, 0.0)  # Bin(0, p) is 0
    assert binom_half_cdf(0, 48) == 0.5**48 and binom_half_cdf(47, 48) == 1 - 0.5**48
    assert binom_half_cdf(6, 13) == 0.5  # the median of an odd n halves the mass
    with pytest.raises(ValueError):
        binom_half_cdf(0, -1)


@pytest.mark.parametrize("n", [1, 2, 7, 20, 33, 64, 150, 200])
def test_binom_half_cdf_matches_exact_rational_arithmetic(n: int) -> None:
    for k in range(n + 1):
        assert binom_half_cdf(k, n) == pytest.approx(_exact_cdf(k, n), rel=1e-13, abs=0.0)


def _binary_search(a: Callable[[int], float], d: float, lo: int, hi: int) -> int:
    """scipy.stats._binomtest._binary_search_for_binom_tst, line for line."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        midval = a(mid)
        if midval < d:
            lo = mid + 1
        elif midval > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1


def _scipy_binomtest_half(ks: list[int], n: int) -> dict[str, list[float]]:
    """scipy.stats.binomtest(k, n, 0.5).pvalue for each k, both alternatives: scipy's own
    steps (scipy/stats/_binomtest.py) with its scalar binom.pmf/cdf/sf calls taken from one
    vectorised call each (elementwise what the scalar calls give). Equal to binomtest bit for
    bit at every (n, k) of this file (checked); the test asks binomtest itself at a few k per
    n to hold it so. ~150x cheaper than a binomtest call per k."""
    pmf = binom.pmf(np.arange(n + 1), n, 0.5).tolist()
    cdf = binom.cdf(ks, n, 0.5).tolist()
    greater = binom.sf(np.array(ks) - 1, n, 0.5).tolist()  # scipy's 'greater': sf(k - 1)
    # two-sided: the tail beyond the first term on the other side of the mode <= pmf(k)
    other: list[tuple[str, int] | None] = []
    for k in ks:
        d = pmf[k] * (1 + 1e-7)
        if 2 * k == n:
            other.append(None)
        elif 2 * k < n:
            ix = _binary_search(lambda x: -pmf[x], -d, (n + 1) // 2, n)
            other.append(("sf", n - (n - ix + int(d == pmf[ix]))))
        else:
            other.append(("cdf", _binary_search(lambda x: pmf[x], d, 0, n // 2)))
    sf_at = iter(binom.sf([o[1] for o in other if o and o[0] == "sf"], n, 0.5).tolist())
    cdf_at = iter(binom.cdf([o[1] for o in other if o and o[0] == "cdf"], n, 0.5).tolist())
    two_sided = [
        1.0
        if o is None
        else min(1.0, c + next(sf_at))
        if o[0] == "sf"
        else min(1.0, next(cdf_at) + g)
        for o, c, g in zip(other, cdf, greater, strict=True)
    ]
    return {"two-sided": two_sided, "greater": greater}


@pytest.mark.parametrize("n", [*range(1, 81), *LARGE_N])
def test_binomtest_half_equals_scipy_binomtest(n: int) -> None:
    ks = [k for k in _ks(n) if 0 <= k <= n]
    theirs = _scipy_binomtest_half(ks, n)
    for alternative in ("two-sided", "greater"):
        for k, expected in zip(ks, theirs[alternative], strict=True):
            _close(binomtest_half(k, n, alternative), expected)
        # the vectorised oracle is binomtest's value: both ends, both sides of the mode, the mode
        for k in sorted({0, ks[len(ks) // 3], n // 2, ks[2 * len(ks) // 3], n}):
            expected = theirs[alternative][ks.index(k)]
            assert binomtest(k, n, 0.5, alternative=alternative).pvalue == expected, (k, n)


def test_binomtest_half_by_hand_and_bad_input_like_scipy() -> None:
    assert binomtest_half(8, 10, "greater") == pytest.approx(56 / 1024, rel=1e-14)
    assert binomtest_half(0, 10, "greater") == 1.0
    assert binomtest_half(1, 10) == pytest.approx(22 / 1024, rel=1e-14)
    assert binomtest_half(48, 48) == 2 * 0.5**48
    assert binomtest_half(5, 10) == 1.0 and binomtest_half(5, 11) == 1.0
    for k, n in ((0, 0), (11, 10), (-1, 10)):
        with pytest.raises(ValueError):
            binomtest(k, n, 0.5)
        with pytest.raises(ValueError):
            binomtest_half(k, n)


def test_rank_average_equals_scipy_rankdata_with_ties() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        values = rng.integers(0, 6, rng.integers(0, 15)).astype(np.float64) / 2
        assert np.array_equal(rank_average(values), rankdata(values, method="average"))
    values = np.array([3.0, 1.0, 3.0, 2.0, 3.0, -np.inf, np.inf])
    assert rank_average(values).tolist() == [5.0, 2.0, 5.0, 3.0, 5.0, 1.0, 7.0]
    assert np.array_equal(rank_average(values), rankdata(values, method="average"))


def test_rank_average_propagates_nan_like_scipy() -> None:
    values = np.array([2.0, np.nan, 1.0])
    assert np.isnan(rank_average(values)).all()
    assert np.isnan(rankdata(values, method="average")).all()
    assert rank_average(np.array([])).size == 0


@pytest.mark.slow
def test_spearman_rho_equals_scipy_spearmanr() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        size = int(rng.integers(3, 12))
        x = rng.integers(0, 4, size).astype(np.float64)
        y = rng.normal(size=size).round(1)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            assert math.isnan(spearman_rho(x, y))
            continue
        expected = spearmanr(x, y).statistic
        assert spearman_rho(x, y) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_normal_quantile_and_thresholds_equal_scipy_norm_ppf() -> None:
    # scipy's ppf is an elementwise ufunc: one call over all q gives each scalar call's value
    qs = np.linspace(1e-6, 1 - 1e-6, 2001).tolist() + [0.95, 0.975, 0.999, 1e-12]
    for q, theirs in zip(qs, norm.ppf(qs).tolist(), strict=True):
        assert NormalDist().inv_cdf(q) == pytest.approx(theirs, rel=1e-14)
    for level in (0.9, 0.95, 0.99, 0.999):
        z = float(norm.ppf(level))  # depends on the level only
        for n in range(1, 20_001, 7):
            assert threshold_count(n, level) == math.ceil(n / 2 + z * math.sqrt(n) / 2), n


def _sign_flips_p(d: np.ndarray) -> float:
    """The Wilcoxon two-sided p by enumeration: T+ (midranks of |d|, zeros dropped) under
    every one of the 2**n signs, p = min(1, 2 min(P(T+ <= t), P(T+ >= t)))."""
    import itertools

    d = d[d != 0]
    ranks = rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    totals = [
        sum(r for r, plus in zip(ranks, signs, strict=True) if plus)
        for signs in itertools.product((False, True), repeat=d.size)
    ]
    below = sum(t <= observed + 1e-9 for t in totals) / len(totals)
    above = sum(t >= observed - 1e-9 for t in totals) / len(totals)
    return min(1.0, 2 * min(below, above))


@pytest.mark.parametrize("n", range(1, 51))
def test_wilcoxon_without_ties_equals_scipy_exact(n: int) -> None:
    rng = np.random.default_rng(n)
    for shift in (0.0, 0.4, 1.5):
        d = rng.normal(shift, 1.0, n)
        _close(wilcoxon_signed_rank(d), wilcoxon(d, method="exact").pvalue)


@pytest.mark.parametrize("seed", range(12))
def test_wilcoxon_with_ties_and_zeros_is_the_exact_sign_flip_distribution(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    d = np.round(rng.normal(0.5, 1.5, 3 + seed))  # integer differences: tied sizes and zeros
    assert wilcoxon_signed_rank(d) == pytest.approx(_sign_flips_p(d), rel=1e-12)


@pytest.mark.parametrize("n", [201, 500, 2000])
def test_wilcoxon_above_the_exact_size_equals_scipy_normal_approximation(n: int) -> None:
    rng = np.random.default_rng(n)
    for d in (rng.normal(0.05, 1.0, n), np.round(rng.normal(0.1, 2.0, n))):
        if np.count_nonzero(d) <= EXACT_WILCOXON_N:
            continue
        theirs = wilcoxon(d, method="approx", correction=False).pvalue
        _close(wilcoxon_signed_rank(d), theirs)


def test_wilcoxon_of_nothing_moved_is_one_and_a_clear_shift_is_small() -> None:
    assert wilcoxon_signed_rank([0.0, 0.0, 0.0]) == 1.0
    assert wilcoxon_signed_rank([]) == 1.0
    # ten scores each one point lower: every sign the same, p = 2 / 2**10
    assert wilcoxon_signed_rank([-1.0] * 10) == pytest.approx(2 / 1024)
