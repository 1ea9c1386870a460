"""Do two judges give the same verdicts? Cohen's kappa on their pairwise verdicts.

Each judge's verdict on a human non-tie pair is one of three labels: it prefers the
human-preferred image (`right`), the other one (`wrong`), or neither (`tie`: equal scores,
or a pairwise judge's tie). The label is the judge's choice between the pair's two images
seen from the human winner's side, so it is a relabelling of `a`/`b`/`tie` and kappa is
the same either way. Kappa is computed over the pairs both judges evaluated:

    kappa = (p_o - p_e) / (1 - p_e)

with p_o the share of pairs where the labels agree and p_e the agreement expected by
chance from each judge's own label shares, sum_c p_a(c) p_b(c) (Cohen 1960). It is
undefined (None) without a pair, or when p_e = 1 (both judges always give the one same
label: no variation to agree on).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from titjudge.metrics.pairwise import PairOutcomes

LABELS = ("right", "wrong", "tie")


def cohen_kappa(labels_a: Sequence[Hashable], labels_b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (ValueError when the lengths
    differ); None when undefined (see the module docstring)."""
    if len(labels_a) != len(labels_b):
        raise ValueError(
            f"kappa needs one label per item from each rater: {len(labels_a)} != {len(labels_b)}"
        )
    n = len(labels_a)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(labels_a, labels_b, strict=True)) / n
    count_a, count_b = Counter(labels_a), Counter(labels_b)
    expected = sum(count_a[c] * count_b.get(c, 0) for c in count_a) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def verdict_labels(outcomes: PairOutcomes) -> np.ndarray:
    """Per non-tie human pair: `right`, `wrong`, `tie`, or '' where the pair was not evaluated."""
    labels = np.full(outcomes.evaluated.size, "", dtype=object)
    labels[outcomes.evaluated] = "wrong"
    labels[outcomes.correct] = "right"
    labels[outcomes.metric_tie] = "tie"
    return labels


@dataclass(frozen=True)
class Agreement:
    """Two judges' verdicts on the pairs both evaluated: how often they match, and kappa."""

    variant_a: str
    variant_b: str
    n_pairs: int
    n_agree: int
    kappa: float | None

    @property
    def agreement(self) -> float | None:
        return self.n_agree / self.n_pairs if self.n_pairs else None


def verdict_agreement(
    name_a: str, outcomes_a: PairOutcomes, name_b: str, outcomes_b: PairOutcomes
) -> Agreement:
    """Agreement and Cohen's kappa of two variants' verdicts (outcomes of one `EvalData`)."""
    shared = outcomes_a.evaluated & outcomes_b.evaluated
    labels_a = list(verdict_labels(outcomes_a)[shared])
    labels_b = list(verdict_labels(outcomes_b)[shared])
    return Agreement(
        variant_a=name_a,
        variant_b=name_b,
        n_pairs=len(labels_a),
        n_agree=sum(a == b for a, b in zip(labels_a, labels_b, strict=True)),
        kappa=cohen_kappa(labels_a, labels_b),
    )
