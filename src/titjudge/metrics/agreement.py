"""Inter-annotator agreement on nominal labels: Krippendorff's alpha and Fleiss' kappa.

Both take *units* (a pair of images), each the list of labels its annotators gave (`a`,
`b`, `tie`); units with fewer than two labels carry no agreement information and are left
out. Either is None where it is undefined: fewer than two labels in all, or every label
the same category (no expected disagreement to compare with).

Krippendorff's alpha (nominal), after Krippendorff, "Computing Krippendorff's
Alpha-Reliability" (2011): every ordered pair of labels from different annotators of a
unit with m labels adds 1/(m - 1) to the coincidence matrix o; n_c are its margins and n
their sum; alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k. It allows any
number of annotators per unit (missing votes).

Fleiss' kappa, after Fleiss, "Measuring nominal scale agreement among many raters" (1971):
P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1)) per unit, P = their mean, p_j the share of all
labels in category j, P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e). Fleiss assumes the
same number of raters per unit; with varying numbers, as here, p_j pools every label and
P_i uses each unit's own n_i (the textbook value when every unit has the same count).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence


def _rated(units: Iterable[Sequence[Hashable]]) -> list[Sequence[Hashable]]:
    return [unit for unit in units if len(unit) >= 2]


def krippendorff_alpha_nominal(units: Iterable[Sequence[Hashable]]) -> float | None:
    """Krippendorff's alpha for nominal labels; None when undefined (see module docstring)."""
    coincidence: dict[tuple[Hashable, Hashable], float] = {}
    for unit in _rated(units):
        m = len(unit)
        counts = Counter(unit)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_c - 1) if c == k else n_c * n_k
                coincidence[(c, k)] = coincidence.get((c, k), 0.0) + pairs / (m - 1)
    margins: dict[Hashable, float] = {}
    for (c, _), value in coincidence.items():
        margins[c] = margins.get(c, 0.0) + value
    n = sum(margins.values())
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(margins[c] * margins[k] for c in margins for k in margins if c != k)
    if n < 2 or expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def fleiss_parts(units: Iterable[Sequence[Hashable]]) -> tuple[float, float] | None:
    """Fleiss' kappa's observed agreement (the mean share of agreeing pairs of raters per
    unit) and its chance agreement (the base rate: the sum of each label's squared share);
    None when kappa is undefined (see module docstring)."""
    rated = _rated(units)
    if not rated:
        return None
    per_unit = []
    totals: Counter[Hashable] = Counter()
    for unit in rated:
        counts = Counter(unit)
        n_i = len(unit)
        totals.update(counts)
        per_unit.append((sum(v * v for v in counts.values()) - n_i) / (n_i * (n_i - 1)))
    labels = sum(totals.values())
    chance = sum((count / labels) ** 2 for count in totals.values())
    if chance >= 1.0:
        return None
    return sum(per_unit) / len(per_unit), chance


def fleiss_kappa(units: Iterable[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa; None when undefined (see module docstring)."""
    parts = fleiss_parts(units)
    if parts is None:
        return None
    observed, chance = parts
    return (observed - chance) / (1.0 - chance)
