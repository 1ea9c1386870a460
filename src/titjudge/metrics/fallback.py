"""The fallback rule: a variant whose failed calls fell back to another judge never mixes scales.

A variant that fell back for some items holds scores from two judges. Pairs that compare a
judged score with a fallback score are left out of that variant's pairwise metrics and
counted (`n_pairs_mixed_source`). Its rank metrics (SRCC, KRCC, nDCG, its leaderboard
standing) rank only the judged scores: fallback items are left out of each prompt's
ranking like failed ones and counted (`n_fallback_unranked`).

A variant that fell back for every item it scored has no number of its own: its scores are
all its fallback's, so its own judge agreed with no pair. `own_scores` leaves it none (every
pair skipped, every metric None) rather than repeat the fallback judge's numbers under its
name (`records.origins.VariantOrigin` says where its scores came from).

`metrics.summary.metrics_record` applies it while it computes each variant's numbers (once), so
`titjudge run` and `titjudge metrics` on a scores CSV give the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from titjudge.metrics.tables import EvalData


@dataclass(frozen=True)
class FallbackMasks:
    """Which pairs a variant's fallback rows leave out, and its vector for rank metrics."""

    #: per non-tie human pair / per human tie pair: True where the two sides mix sources
    mixed_pairs: np.ndarray
    mixed_ties: np.ndarray
    #: the score vector with fallback items unscored (NaN), for rank metrics
    rank_vector: np.ndarray
    n_fallback: int

    @property
    def n_mixed(self) -> int:
        return int(self.mixed_pairs.sum() + self.mixed_ties.sum())


def fallback_only(statuses: Iterable[str]) -> bool:
    """Whether a variant with these item statuses (ok|fallback|failed) has no score of its
    own: some fell back and none is ok."""
    found = set(statuses)
    return "fallback" in found and "ok" not in found


def own_scores(vector: np.ndarray, statuses: Mapping[str, str]) -> np.ndarray:
    """`vector` as the variant's own judge scored it: all NaN when every scored item of the
    variant came from its fallback (see the module docstring), else `vector` itself."""
    if fallback_only(statuses.values()):
        return np.full_like(vector, np.nan, dtype=np.float64)
    return vector


def fallback_masks(
    vector: np.ndarray, statuses: Mapping[str, str], data: EvalData
) -> FallbackMasks | None:
    """The rule's masks for a variant with item `statuses` (ok|fallback|failed); None when
    the variant never fell back."""
    if "fallback" not in statuses.values():
        return None
    source = np.full(len(data.item_ids), "", dtype=object)
    for item_id, status in statuses.items():
        pos = data.item_pos.get(item_id)
        if pos is not None:
            source[pos] = status

    def mixed(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        a, b = source[left], source[right]
        known = (a != "") & (b != "") & (a != "failed") & (b != "failed")
        return np.asarray(known & (a != b), dtype=bool)

    rank_vector = vector.copy()
    rank_vector[source == "fallback"] = np.nan
    return FallbackMasks(
        mixed_pairs=mixed(data.pair_winner, data.pair_loser),
        mixed_ties=mixed(data.tie_a, data.tie_b),
        rank_vector=rank_vector,
        n_fallback=int(sum(s == "fallback" for s in statuses.values())),
    )
