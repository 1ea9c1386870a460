"""Each public set's own number, computed as its paper computes it (`dataset.json`'s `measure`).

titjudge's pairwise accuracy (decided pairs pooled, a metric tie wrong) is the number of HPDv3
and ImageRewardDB as their papers score them; the others publish a different number, so a run
on such a set also computes that one, from the same scores the accuracy used (the fallback
rule applied):

- `inversion` (HPDv2, HPSv2's hpsv2/evaluation.py): per ranked prompt, 1 - discordant pairs /
  C(n, 2), a human tie never discordant, averaged over prompts. HPSv2 orders a prompt's
  images by argsort, so two tied scores are ordered arbitrarily; here a pair the judge ties
  and people do not counts half discordant, HPSv2's number in expectation over that order.
- `tie-aware` (Pick-a-Pic, PickScore's eval_preference_predictor.py): every pair counts,
  human ties included; the judge predicts a tie when its two scores differ by at most a
  threshold; a prediction scores 1 when it equals the label, 0.5 when one of the two is a
  tie, else 0. PickScore chooses the threshold on validation_unique; a run has one split, so
  the value is given at threshold 0 (a tie only when the scores are equal) and at the best
  threshold for these pairs (optimistic: chosen on the pairs it is scored on).
- `ratings` (EvalMuse-40K, LongT2IBench): SRCC (the headline), PLCC and Kendall's tau-b
  between each image's score and its mean opinion score, pooled over every rated image the
  judge scored itself, and PLCC after the 4-parameter logistic fit that image-quality work
  (and EvalMuse's evaluate.py) maps the scores through first (`plcc_logistic`).
- `ratings-pairwise` (GenAI-Bench, t2v_metrics' evaluate_scores): those numbers, with the
  headline the tie-calibrated pairwise accuracy of Deutsch et al. (2023) over every two rated
  images of the whole set (not within prompts), human ties kept, the threshold chosen on the
  same pairs as t2v_metrics does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from titjudge.metrics.tables import EvalData, pairwise_signs, row_chunks
from titjudge.records.run_record import ProtocolScore

#: the measures a preset can name, in words (the report's line)
MEASURES = {
    "pairwise": "pairwise accuracy (the set's own protocol)",
    "inversion": "mean per-prompt inversion score (HPSv2)",
    "tie-aware": "tie-aware accuracy (PickScore)",
    "ratings": "SRCC / PLCC against the mean opinion score",
    "ratings-pairwise": "tie-calibrated pairwise accuracy over every two rated images",
}
#: the most rated images `ratings-pairwise` pairs (n(n-1)/2 differences are held)
MAX_PAIRED_IMAGES = 20_000


@dataclass(frozen=True)
class ProtocolInput:
    """What a measure reads beyond the variant's scores: its name and, for `ratings`, each
    rated image's mean opinion score."""

    measure: str
    mos: Mapping[str, float] | None = None


def protocol_score(
    measure: ProtocolInput, vector: np.ndarray, data: EvalData, own: Mapping[str, float]
) -> ProtocolScore | None:
    """The set's own number for one variant: `vector` its scores over `data` (NaN where not
    scored or not its own), `own` its own scores by item (the ratings measure's); None for
    `pairwise` (the accuracy is that number)."""
    if measure.measure == "inversion":
        return inversion_score(vector, data)
    if measure.measure == "tie-aware":
        return tie_aware_score(vector, data)
    if measure.measure in ("ratings", "ratings-pairwise"):
        found = mos_correlations(own, measure.mos or {})
        if measure.measure == "ratings-pairwise":
            return global_tie_calibrated(found, own, measure.mos or {})
        return found
    return None


def inversion_score(vector: np.ndarray, data: EvalData) -> ProtocolScore:
    """HPSv2's mean per-prompt inversion score over the ranked prompts with two or more
    scored images."""
    per_prompt: list[float] = []
    rows, width = data.group_items.shape
    if rows and width:
        scores = np.where(data.group_items >= 0, vector[data.group_items], np.nan)
        for chunk in row_chunks(rows, width):
            valid = np.isfinite(scores[chunk]) & np.isfinite(data.group_ranks[chunk])
            model, counted = pairwise_signs(scores[chunk], valid)
            # a better (smaller) human rank is a higher score: agreement is sign(-rank)
            human, _ = pairwise_signs(-data.group_ranks[chunk], valid)
            opposite = counted & (model * human < 0)
            half = counted & (model == 0) & (human != 0)
            discordant = (opposite.sum(axis=(1, 2)) + 0.5 * half.sum(axis=(1, 2))) / 2
            n = valid.sum(axis=1)
            total = n * (n - 1) / 2
            for found, pairs in zip(discordant, total, strict=True):
                if pairs > 0:
                    per_prompt.append(1.0 - float(found) / float(pairs))
    return ProtocolScore(
        measure="inversion",
        value=sum(per_prompt) / len(per_prompt) if per_prompt else None,
        n=len(per_prompt),
        unit="prompts",
        skipped=len(data.rank_groups) - len(per_prompt),
    )


def tie_aware_score(vector: np.ndarray, data: EvalData) -> ProtocolScore:
    """PickScore's tie-aware accuracy over every pair both of whose images were scored: at
    threshold 0 and at the best threshold for these pairs."""
    decided = np.abs(vector[data.pair_winner] - vector[data.pair_loser])
    signed = vector[data.pair_winner] - vector[data.pair_loser]
    keep = np.isfinite(signed)
    decided, signed = decided[keep], signed[keep]
    ties = np.abs(vector[data.tie_a] - vector[data.tie_b])
    ties = ties[np.isfinite(ties)]
    n = int(decided.size + ties.size)
    if n == 0:
        return ProtocolScore(measure="tie-aware", value=None, n=0, unit="pairs")

    def scored(threshold: float) -> float:
        predicted_tie = decided <= threshold
        right = np.where(predicted_tie, 0.5, np.where(signed > 0, 1.0, 0.0)).sum()
        tie_right = np.where(ties <= threshold, 1.0, 0.5).sum()
        return float(right + tie_right) / n

    candidates = np.unique(np.concatenate(([0.0], decided, ties)))
    values = [scored(float(t)) for t in candidates]
    best = int(np.argmax(values))
    return ProtocolScore(
        measure="tie-aware",
        value=values[0],  # candidates[0] is 0
        n=n,
        unit="pairs",
        values={"best_threshold_value": values[best], "best_threshold": float(candidates[best])},
    )


def mos_correlations(scores: Mapping[str, float], mos: Mapping[str, float]) -> ProtocolScore:
    """SRCC (headline), PLCC and Kendall's tau-b between the scores and the mean opinion
    scores of the rated images the variant scored (its own scores only)."""
    shared = [item for item in mos if item in scores and math.isfinite(scores[item])]
    x = np.fromiter((scores[i] for i in shared), dtype=np.float64, count=len(shared))
    y = np.fromiter((mos[i] for i in shared), dtype=np.float64, count=len(shared))
    found = {
        "plcc": pearson(x, y),
        "plcc_logistic": logistic_plcc(x, y),
        "krcc": kendall_tau_b(x, y),
    }
    return ProtocolScore(
        measure="ratings",
        value=pearson(average_ranks(x), average_ranks(y)),
        n=len(shared),
        unit="images",
        skipped=len(mos) - len(shared),
        values=found,
    )


def global_tie_calibrated(
    correlations: ProtocolScore, scores: Mapping[str, float], mos: Mapping[str, float]
) -> ProtocolScore:
    """`correlations` with the tie-calibrated pairwise accuracy over every two rated images
    as the headline (t2v_metrics' `pairwise_acc_with_tie_optimization`, ungrouped)."""
    shared = [item for item in mos if item in scores and math.isfinite(scores[item])]
    values = {"srcc": correlations.value, **correlations.values}
    if len(shared) > MAX_PAIRED_IMAGES:
        return correlations.model_copy(
            update={
                "measure": "ratings-pairwise",
                "value": None,
                "values": {**values, "n_too_many_to_pair": float(len(shared))},
            }
        )
    x = np.fromiter((scores[i] for i in shared), dtype=np.float64, count=len(shared))
    y = np.fromiter((mos[i] for i in shared), dtype=np.float64, count=len(shared))
    concordant: list[np.ndarray] = []
    tied: list[np.ndarray] = []
    for i in range(x.size - 1):
        d, h = x[i + 1 :] - x[i], y[i + 1 :] - y[i]
        concordant.append(np.abs(d[(h != 0) & (np.sign(d) == np.sign(h))]))
        tied.append(np.abs(d[h == 0]))
    n_pairs = x.size * (x.size - 1) // 2
    accuracy, epsilon = _best_epsilon(concordant, tied, n_pairs)
    return ProtocolScore(
        measure="ratings-pairwise",
        value=accuracy,
        n=len(shared),
        unit="images",
        skipped=correlations.skipped,
        values={**values, "tie_epsilon": epsilon, "n_pairs": float(n_pairs)},
    )


def _best_epsilon(
    concordant: list[np.ndarray], tied: list[np.ndarray], n_pairs: int
) -> tuple[float | None, float | None]:
    """Deutsch et al.'s acc_eq at its best epsilon ({0} and every observed |difference|, the
    smallest of equally good ones): concordant pairs right while |d| > eps, human ties once
    |d| <= eps."""
    if n_pairs == 0:
        return None, None
    right = np.sort(np.concatenate(concordant)) if concordant else np.empty(0)
    ties = np.sort(np.concatenate(tied)) if tied else np.empty(0)
    candidates = np.unique(np.concatenate(([0.0], right, ties)))
    correct = (right.size - np.searchsorted(right, candidates, side="right")) + np.searchsorted(
        ties, candidates, side="right"
    )
    best = int(np.argmax(correct))
    return float(correct[best] / n_pairs), float(candidates[best])


def logistic_plcc(x: np.ndarray, y: np.ndarray) -> float | None:
    """PLCC between `y` and `x` mapped through the 4-parameter logistic
    b2 + (b1 - b2) / (1 + exp(-(x - b3) / |b4|)) fitted to `y` by least squares
    (Levenberg-Marquardt from EvalMuse's start [max y, min y, mean x, std x], as
    scipy.optimize.curve_fit there); None when x or y is constant or there are < 4 images."""
    if x.size < 4 or float(np.std(x)) == 0 or float(np.std(y)) == 0:
        return None
    beta = np.array([y.max(), y.min(), x.mean(), x.std()], dtype=np.float64)

    def model(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scale = max(abs(float(b[3])), 1e-12)
        z = np.clip((x - b[2]) / scale, -500, 500)
        g = 1.0 / (1.0 + np.exp(-z))
        slope = (b[0] - b[1]) * g * (1 - g)
        jacobian = np.stack(
            [g, 1 - g, -slope / scale, -slope * z / scale * np.sign(b[3] or 1.0)], axis=1
        )
        return b[1] + (b[0] - b[1]) * g, jacobian

    fitted, jacobian = model(beta)
    error = float(((y - fitted) ** 2).sum())
    damping = 1e-3
    for _ in range(500):
        normal = jacobian.T @ jacobian
        step = np.linalg.lstsq(
            normal + damping * np.diag(np.diag(normal) + 1e-12),
            jacobian.T @ (y - fitted),
            rcond=None,
        )[0]
        trial = beta + step
        trial_fit, trial_jacobian = model(trial)
        trial_error = float(((y - trial_fit) ** 2).sum())
        if trial_error < error:
            done = error - trial_error <= 1e-15 * max(error, 1e-300)
            beta, fitted, jacobian, error = trial, trial_fit, trial_jacobian, trial_error
            damping = max(damping / 10, 1e-12)
            if done:
                break
        else:
            damping *= 10
            if damping > 1e12:
                break
    return pearson(fitted, y)


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r; None with fewer than two values or a constant side."""
    if x.size < 2:
        return None
    cx, cy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float((cx**2).sum()) * float((cy**2).sum()))
    if denominator == 0:
        return None
    return max(-1.0, min(1.0, float((cx * cy).sum()) / denominator))


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing their average (scipy.stats.rankdata's 'average')."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.concatenate((starts[1:], [values.size]))
    ranks = np.empty(values.size)
    for start, end in zip(starts, ends, strict=True):
        ranks[order[start:end]] = (start + end + 1) / 2
    return ranks


def _tied_pairs(values: np.ndarray) -> int:
    _, counts = np.unique(values, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float | None:
    """Kendall's tau-b (scipy.stats.kendalltau's default), in O(n log n): the pairs ordered
    by x then y, discordant pairs counted as y's inversions."""
    n = x.size
    if n < 2:
        return None
    order = np.lexsort((y, x))
    ys = y[order]
    pairs = n * (n - 1) // 2
    x_ties, y_ties = _tied_pairs(x), _tied_pairs(y)
    joint = _tied_pairs(x[order] + 1j * ys)
    if x_ties == pairs or y_ties == pairs:
        return None
    swaps = _inversions(ys)
    tau = (pairs - x_ties - y_ties + joint - 2 * swaps) / math.sqrt(
        (pairs - x_ties) * (pairs - y_ties)
    )
    return max(-1.0, min(1.0, tau))


def _inversions(values: np.ndarray) -> int:
    """Pairs i < j with values[i] > values[j] (a Fenwick tree over the values' dense ranks)."""
    dense = np.unique(values, return_inverse=True)[1].ravel() + 1
    tree = [0] * (int(dense.max()) + 1)
    found = 0
    for seen, rank in enumerate(dense.tolist()):
        at_most, k = 0, rank
        while k > 0:
            at_most += tree[k]
            k -= k & -k
        found += seen - at_most
        k = rank
        while k < len(tree):
            tree[k] += 1
            k += k & -k
    return found


__all__ = [
    "MEASURES",
    "ProtocolInput",
    "MAX_PAIRED_IMAGES",
    "average_ranks",
    "global_tie_calibrated",
    "logistic_plcc",
    "inversion_score",
    "kendall_tau_b",
    "mos_correlations",
    "pearson",
    "protocol_score",
    "tie_aware_score",
]
