"""Leaderboard of T2I models (the TIT-Score paper's Table 3), by humans and by each variant.

Within each human-ranked prompt every image gets a rank (1 = best, ties averaged):
from the human ranking, or from the variant's scores (higher = better). A model's
average rank is the mean over the prompts where it has an image; the model ranking
orders models by that average (ties averaged), and a variant's agreement with humans
is the Spearman correlation between its model ranking and the human one.

A variant ranks only the images it scored: with a failed image, that prompt's ranks
run over fewer images. `n_prompts` per model says how many prompts stand behind each
average, so such gaps are visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from titjudge.errors import DataError
from titjudge.metrics.correlation import spearman_rho
from titjudge.metrics.exact import rank_average
from titjudge.metrics.tables import EvalData, row_ranks
from titjudge.records.items import Item
from titjudge.records.run_record import Leaderboard, RankerStandings, Standing


def _model_of_items(data: EvalData, items: Sequence[Item]) -> tuple[list[str], np.ndarray]:
    model_of = {item.item_id: item.t2i_model for item in items}
    models = sorted(set(model_of.values()))
    model_pos = {name: pos for pos, name in enumerate(models)}
    index = np.full(len(data.item_ids), -1, dtype=np.int64)
    for group in data.rank_groups:
        for pos in group.items:
            item_id = data.item_ids[pos]
            if item_id not in model_of:
                raise DataError(
                    f"leaderboard: item {item_id!r} has a human rank but is not in the manifest"
                )
            index[pos] = model_pos[model_of[item_id]]
    return models, index


def _standings(models: list[str], totals: np.ndarray, counts: np.ndarray) -> dict[str, Standing]:
    defined = counts > 0
    average = np.divide(totals, counts, out=np.full(len(models), np.nan), where=defined)
    position = np.full(len(models), np.nan)
    position[defined] = rank_average(average[defined])
    return {
        name: Standing(
            average_rank=float(average[i]) if defined[i] else None,
            rank=float(position[i]) if defined[i] else None,
            n_prompts=int(counts[i]),
        )
        for i, name in enumerate(models)
    }


def _ranking_srcc(human: dict[str, Standing], variant: dict[str, Standing]) -> float | None:
    both = [
        (human[m].average_rank, variant[m].average_rank)
        for m in human
        if human[m].average_rank is not None and variant[m].average_rank is not None
    ]
    if len(both) < 2:
        return None
    x, y = np.array(both, dtype=np.float64).T
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return spearman_rho(x, y)


def leaderboard_from_arrays(
    score_vectors: Mapping[str, np.ndarray], data: EvalData, items: Sequence[Item]
) -> Leaderboard:
    """Leaderboard from score vectors aligned with `data.item_ids` (NaN = not scored)."""
    models, model_index = _model_of_items(data, items)
    n_models = len(models)
    present = data.group_items >= 0
    group_models = model_index[data.group_items[present]]
    human_total = np.bincount(group_models, weights=data.group_ranks[present], minlength=n_models)
    human_count = np.bincount(group_models, minlength=n_models).astype(np.float64)
    totals, counts = {}, {}
    for name, vector in score_vectors.items():
        padded = np.where(present, vector[data.group_items], np.nan)
        ranks = row_ranks(-padded)[present]  # higher score = better = rank 1
        scored = np.isfinite(ranks)
        totals[name] = np.bincount(group_models[scored], weights=ranks[scored], minlength=n_models)
        counts[name] = np.bincount(group_models[scored], minlength=n_models).astype(np.float64)
    human = _standings(models, human_total, human_count)
    variants = {name: _standings(models, totals[name], counts[name]) for name in score_vectors}
    order = sorted(
        models,
        key=lambda m: (human[m].average_rank is None, human[m].average_rank or 0.0, m),
    )
    return Leaderboard(
        models=order,
        human={m: human[m] for m in order},
        variants={
            name: RankerStandings(
                srcc=_ranking_srcc(human, standing), models={m: standing[m] for m in order}
            )
            for name, standing in variants.items()
        },
    )
