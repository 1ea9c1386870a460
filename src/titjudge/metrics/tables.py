"""Human judgments turned into index arrays once, so every variant is scored by array ops.

Evaluating dozens of ablation variants against 12,832 pairs and 1,000 bootstrap
resamples must take seconds, not minutes: the human side (pairs, ranks) is indexed
here once and each variant only contributes a score vector aligned with `item_ids`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from titjudge.errors import DataError
from titjudge.metrics.exact import rank_average
from titjudge.records.items import HumanPair, RankRow


@dataclass(frozen=True)
class RankGroup:
    """One prompt's human ranking: item positions and ranks (ties averaged, 1 = best)."""

    prompt: int
    items: np.ndarray
    ranks: np.ndarray


@dataclass(frozen=True)
class EvalData:
    """Pairs and ranks as integer arrays over one item universe and one prompt universe."""

    item_ids: list[str]
    prompt_ids: list[str]
    #: non-tie human pairs: prompt position, preferred item, other item
    pair_prompt: np.ndarray
    pair_winner: np.ndarray
    pair_loser: np.ndarray
    #: human tie pairs (excluded from pairwise accuracy, used by tie calibration)
    tie_prompt: np.ndarray
    tie_a: np.ndarray
    tie_b: np.ndarray
    rank_groups: list[RankGroup]
    #: the same groups padded into matrices, one row per ranked prompt, so per-prompt
    #: statistics run for all prompts at once: items (-1 pad), ranks (NaN pad)
    group_prompt: np.ndarray
    group_items: np.ndarray
    group_ranks: np.ndarray
    item_pos: dict[str, int] = field(repr=False)

    @property
    def n_prompts(self) -> int:
        return len(self.prompt_ids)

    @property
    def n_human_ties(self) -> int:
        return int(self.tie_a.size)

    def score_vector(self, scores: Mapping[str, float]) -> np.ndarray:
        """Scores aligned with `item_ids`; NaN marks an item the variant did not score."""
        vector = np.full(len(self.item_ids), np.nan)
        for item_id, score in scores.items():
            pos = self.item_pos.get(item_id)
            if pos is not None:
                vector[pos] = score
        return vector


def _ints(values: Iterable[int]) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64)


def build_eval_data(pairs: Sequence[HumanPair], ranks: Sequence[RankRow]) -> EvalData:
    """Index pairs and ranks; a ranking that lists an item twice is a DataError.

    Ranks are re-ranked within each prompt with ties averaged, so files that use
    competition (1,1,3) or dense (1,1,2) tie ranks give the same gains and leaderboards.
    """
    item_pos: dict[str, int] = {}
    prompt_pos: dict[str, int] = {}

    def item(item_id: str) -> int:
        return item_pos.setdefault(item_id, len(item_pos))

    def prompt(prompt_id: str) -> int:
        return prompt_pos.setdefault(prompt_id, len(prompt_pos))

    decided = [p for p in pairs if p.winner != "tie"]
    ties = [p for p in pairs if p.winner == "tie"]
    pair_prompt = _ints(prompt(p.prompt_id) for p in decided)
    pair_winner = _ints(item(p.item_a if p.winner == "a" else p.item_b) for p in decided)
    pair_loser = _ints(item(p.item_b if p.winner == "a" else p.item_a) for p in decided)
    tie_prompt = _ints(prompt(p.prompt_id) for p in ties)
    tie_a = _ints(item(p.item_a) for p in ties)
    tie_b = _ints(item(p.item_b) for p in ties)

    by_prompt: dict[str, dict[str, float]] = {}
    for row in ranks:
        ranking = by_prompt.setdefault(row.prompt_id, {})
        if row.item_id in ranking:
            raise DataError(
                f"ranks: item {row.item_id!r} is ranked twice in prompt {row.prompt_id!r}"
            )
        ranking[row.item_id] = row.rank
    groups = []
    for prompt_id, ranking in by_prompt.items():
        positions = _ints(item(item_id) for item_id in ranking)
        raw = np.fromiter(ranking.values(), dtype=np.float64, count=len(ranking))
        groups.append(RankGroup(prompt(prompt_id), positions, rank_average(raw)))

    width = max((g.items.size for g in groups), default=0)
    group_items = np.full((len(groups), width), -1, dtype=np.int64)
    group_ranks = np.full((len(groups), width), np.nan)
    for i, group in enumerate(groups):
        group_items[i, : group.items.size] = group.items
        group_ranks[i, : group.items.size] = group.ranks

    return EvalData(
        item_ids=list(item_pos),
        prompt_ids=list(prompt_pos),
        pair_prompt=pair_prompt,
        pair_winner=pair_winner,
        pair_loser=pair_loser,
        tie_prompt=tie_prompt,
        tie_a=tie_a,
        tie_b=tie_b,
        rank_groups=groups,
        group_prompt=_ints(g.prompt for g in groups),
        group_items=group_items,
        group_ranks=group_ranks,
        item_pos=item_pos,
    )


#: rows per chunk keep the (rows, n, n) comparison tensors to a few million cells
CELLS_PER_CHUNK = 4_000_000


def pairwise_signs(values: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sign(v_i - v_j) for every ordered pair within each row, and which pairs count."""
    with np.errstate(invalid="ignore"):
        signs = np.sign(values[:, :, None] - values[:, None, :])
    width = values.shape[1]
    counted = valid[:, :, None] & valid[:, None, :] & ~np.eye(width, dtype=bool)
    return np.where(counted, signs, 0.0), counted


def average_ranks(signs: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """1-based ranks with ties averaged (scipy's 'average'): 1 + #smaller + #equal_others / 2."""
    smaller = (counted & (signs > 0)).sum(axis=2)
    equal = (counted & (signs == 0)).sum(axis=2)
    return 1.0 + smaller + equal / 2.0


def row_chunks(rows: int, width: int) -> Iterator[slice]:
    """Row slices small enough that (rows, width, width) tensors stay near CELLS_PER_CHUNK."""
    step = max(1, CELLS_PER_CHUNK // max(1, width * width))
    for start in range(0, rows, step):
        yield slice(start, start + step)


def row_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (1 = smallest) within each row over finite entries; NaN elsewhere."""
    ranks = np.full(values.shape, np.nan)
    for chunk in row_chunks(*values.shape):
        valid = np.isfinite(values[chunk])
        signs, counted = pairwise_signs(values[chunk], valid)
        ranks[chunk] = np.where(valid, average_ranks(signs, counted), np.nan)
    return ranks


@dataclass(frozen=True)
class PromptValues:
    """One value per prompt of an `EvalData` (NaN = not defined for that prompt).

    `considered` marks prompts that had a human ranking at all; a considered prompt
    with a NaN value was *skipped* (too few items, constant scores or ranks) and is
    counted, never averaged in as 0.
    """

    values: np.ndarray
    considered: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        return np.isfinite(self.values)

    @property
    def n_prompts(self) -> int:
        return int(self.valid.sum())

    @property
    def n_skipped(self) -> int:
        return int((self.considered & ~self.valid).sum())

    @property
    def mean(self) -> float | None:
        """Mean over prompts where the value is defined; None when there are none."""
        valid = self.valid
        return float(self.values[valid].mean()) if valid.any() else None
