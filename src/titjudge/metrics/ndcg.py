"""Per-prompt nDCG of a metric's ordering of images against the human ranking.

The TIT-Score paper does not publish its gain function, so it is a parameter here:

- `linear` (default): relevance = n - rank, where n is the number of human-ranked
  images of the prompt and rank is the human rank with ties averaged. The best of 13
  images gets 12, the worst 0.
- `exponential`: gain = 2**(n - rank) - 1, the usual "emphasise the top" choice;
  with 13 images the best one weighs 4095 and the rest barely count.

The discount is 1 / log2(position + 1); with `k` set, positions beyond k count 0.
Relevance comes from the prompt's full human ranking, so a failed image does not
change the gain of the others; DCG and the ideal DCG use the scored images only.

Metric ties are resolved by averaging over every ordering of the tied images, which
has a closed form (McSherry and Najork 2008, "Computing Information Retrieval
Performance Measures Efficiently in the Presence of Tied Scores", ECIR): each image
of a tie group gets the mean discount of the positions the group spans. So the
result is deterministic and a constant-score metric earns the random-ordering value.
All prompts are computed at once on padded (prompt, image) matrices.

A prompt is skipped (NaN, counted) when fewer than two images are scored or all its
scored images have the same human rank: then every ordering is ideal and nDCG says
nothing about the metric.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from titjudge.metrics.tables import (
    EvalData,
    PromptValues,
    pairwise_signs,
    row_chunks,
)

Gain = Literal["linear", "exponential"]
GAINS: tuple[str, ...] = get_args(Gain)


def gains(ranks: np.ndarray, n_ranked: int | np.ndarray, gain: Gain = "linear") -> np.ndarray:
    """Gain of each image from its human rank (1 = best) among `n_ranked` ranked images."""
    relevance = n_ranked - np.asarray(ranks, dtype=np.float64)
    if gain == "linear":
        return relevance
    if gain == "exponential":
        return np.exp2(relevance) - 1.0
    raise ValueError(f"unknown gain {gain!r}; choose one of {', '.join(GAINS)}")


def _ndcg_rows(scores: np.ndarray, gain_values: np.ndarray, k: int | None) -> np.ndarray:
    """nDCG of each row over its entries where score and gain are finite; NaN if undefined.

    Tie averaging without enumerating orders: an image with `g` strictly better-scored
    images and `e` images tied with it (itself included) occupies each of positions
    g+1 .. g+e with probability 1/e, so its expected discount is the mean of those.
    """
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    width = scores.shape[1]
    discount = 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))
    if k is not None:
        discount[k:] = 0.0
    cumulative = np.concatenate(([0.0], np.cumsum(discount)))
    valid = np.isfinite(scores) & np.isfinite(gain_values)
    gain_or_zero = np.where(valid, gain_values, 0.0)

    signs, counted = pairwise_signs(scores, valid)  # sign(s_i - s_j)
    better = (counted & (signs < 0)).sum(axis=2)
    tied = (counted & (signs == 0)).sum(axis=2) + 1
    expected_discount = (cumulative[better + tied] - cumulative[better]) / tied
    dcg = (gain_or_zero * expected_discount).sum(axis=1)

    best_first = -np.sort(-np.where(valid, gain_values, -np.inf), axis=1)
    ideal = (np.where(np.isfinite(best_first), best_first, 0.0) * discount).sum(axis=1)
    highest = np.where(valid, gain_values, -np.inf).max(axis=1, initial=-np.inf)
    lowest = np.where(valid, gain_values, np.inf).min(axis=1, initial=np.inf)
    defined = (valid.sum(axis=1) >= 2) & (highest > lowest) & (ideal > 0)
    return np.divide(dcg, ideal, out=np.full(dcg.shape, np.nan), where=defined)


def ndcg_score(scores: np.ndarray, gain_values: np.ndarray, k: int | None = None) -> float:
    """nDCG of ordering images by `scores` (higher first), ties averaged; NaN if undefined."""
    row_scores = np.asarray(scores, dtype=np.float64).reshape(1, -1)
    row_gains = np.asarray(gain_values, dtype=np.float64).reshape(1, -1)
    return float(_ndcg_rows(row_scores, row_gains, k)[0])


def prompt_ndcg(
    score_vector: np.ndarray, data: EvalData, gain: Gain = "linear", k: int | None = None
) -> PromptValues:
    """nDCG per prompt of `data` (NaN where skipped or unranked), all prompts at once."""
    values = np.full(data.n_prompts, np.nan)
    considered = np.zeros(data.n_prompts, dtype=bool)
    considered[data.group_prompt] = True
    rows, width = data.group_items.shape
    if rows and width:
        present = data.group_items >= 0
        padded = np.where(present, score_vector[data.group_items], np.nan)
        n_ranked = present.sum(axis=1, keepdims=True)
        # gains come from the full human ranking, failed images included (NaN pads stay NaN)
        group_gains = gains(data.group_ranks, n_ranked, gain)
        for chunk in row_chunks(rows, width):
            values[data.group_prompt[chunk]] = _ndcg_rows(padded[chunk], group_gains[chunk], k)
    return PromptValues(values, considered)
