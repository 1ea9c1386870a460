"""Pairwise accuracy against human non-tie pairs, the metric-tie rate, tie calibration.

Pairwise accuracy (the TIT-Score paper's primary number) is the share of human
non-tie pairs where the metric scores the preferred image *strictly* higher. A metric
tie is not a correct prediction, so a judge that answers "7" to everything cannot
look good; the tie rate is reported beside the accuracy. A pair whose either side the
variant failed to score is not evaluated and is counted as skipped.

Tie-calibrated accuracy follows Deutsch, Foster and Freitag (2023), "Ties Matter:
Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration" (EMNLP):
human ties are kept, a metric tie is |score difference| <= epsilon, and epsilon is
chosen to maximise accuracy over all pairs. Because epsilon is fitted on the very pairs
it is scored on, the number is optimistic, as the paper itself notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from titjudge.metrics.tables import EvalData, build_eval_data
from titjudge.records.items import HumanPair


@dataclass(frozen=True)
class PairOutcomes:
    """Per non-tie human pair of an `EvalData`: scored at all, correct, tied by the metric."""

    evaluated: np.ndarray
    correct: np.ndarray
    metric_tie: np.ndarray


@dataclass(frozen=True)
class PairwiseResult:
    """Counts behind pairwise accuracy; rates are None when no pair could be evaluated."""

    n_pairs: int
    n_correct: int
    n_metric_ties: int
    n_pairs_skipped: int
    n_human_ties: int

    @property
    def accuracy(self) -> float | None:
        return self.n_correct / self.n_pairs if self.n_pairs else None

    @property
    def metric_tie_rate(self) -> float | None:
        return self.n_metric_ties / self.n_pairs if self.n_pairs else None


@dataclass(frozen=True)
class TieCalibration:
    """Deutsch et al.'s acc_eq at the best epsilon, over all pairs with both sides scored."""

    accuracy: float | None
    epsilon: float | None
    n_pairs: int


def pair_outcomes(score_vector: np.ndarray, data: EvalData) -> PairOutcomes:
    """Judge every non-tie human pair with one vector of scores (NaN = not scored)."""
    winner = score_vector[data.pair_winner]
    loser = score_vector[data.pair_loser]
    evaluated = np.isfinite(winner) & np.isfinite(loser)
    with np.errstate(invalid="ignore"):
        correct = evaluated & (winner > loser)
        metric_tie = evaluated & (winner == loser)
    return PairOutcomes(evaluated, correct, metric_tie)


def summarise_outcomes(outcomes: PairOutcomes, n_human_ties: int) -> PairwiseResult:
    n_pairs = int(outcomes.evaluated.sum())
    return PairwiseResult(
        n_pairs=n_pairs,
        n_correct=int(outcomes.correct.sum()),
        n_metric_ties=int(outcomes.metric_tie.sum()),
        n_pairs_skipped=int(outcomes.evaluated.size - n_pairs),
        n_human_ties=n_human_ties,
    )


def _rounded(scores: Mapping[str, float], round_digits: int | None) -> Mapping[str, float]:
    if round_digits is None:
        return scores
    return {item_id: round(score, round_digits) for item_id, score in scores.items()}


def pairwise_accuracy(
    scores: Mapping[str, float], pairs: Sequence[HumanPair], round_digits: int | None = None
) -> PairwiseResult:
    """Pairwise accuracy of one variant's scores (failed items simply absent from `scores`)."""
    data = build_eval_data(pairs, [])
    outcomes = pair_outcomes(data.score_vector(_rounded(scores, round_digits)), data)
    return summarise_outcomes(outcomes, data.n_human_ties)


def calibrate_ties(
    score_vector: np.ndarray,
    data: EvalData,
    skip_pairs: np.ndarray | None = None,
    skip_ties: np.ndarray | None = None,
) -> TieCalibration:
    """Best acc_eq over epsilon in {0} and every observed |score difference|; `skip_pairs` /
    `skip_ties` mark non-tie / tie human pairs left out (the fallback rule's mixed pairs).

    Accuracy only changes where epsilon crosses an observed |difference|, so those
    candidates are exhaustive. Among equally good epsilons the smallest is returned.
    """
    diff = score_vector[data.pair_winner] - score_vector[data.pair_loser]
    if skip_pairs is not None:
        diff = diff[~skip_pairs]
    diff = diff[np.isfinite(diff)]
    tie_diff = np.abs(score_vector[data.tie_a] - score_vector[data.tie_b])
    if skip_ties is not None:
        tie_diff = tie_diff[~skip_ties]
    tie_diff = np.sort(tie_diff[np.isfinite(tie_diff)])
    n_pairs = int(diff.size + tie_diff.size)
    if n_pairs == 0:
        return TieCalibration(None, None, 0)
    concordant = np.sort(diff[diff > 0])
    candidates = np.unique(np.concatenate(([0.0], np.abs(diff), tie_diff)))
    # concordant pairs stay correct while |d| > eps; human ties become correct once |d| <= eps
    still_concordant = concordant.size - np.searchsorted(concordant, candidates, side="right")
    ties_matched = np.searchsorted(tie_diff, candidates, side="right")
    correct = still_concordant + ties_matched
    best = int(np.argmax(correct))
    return TieCalibration(float(correct[best] / n_pairs), float(candidates[best]), n_pairs)


def tie_calibrated_accuracy(
    scores: Mapping[str, float], pairs: Sequence[HumanPair]
) -> TieCalibration:
    """Tie-calibrated pairwise accuracy (Deutsch et al. 2023) of one variant, human ties kept."""
    data = build_eval_data(pairs, [])
    return calibrate_ties(data.score_vector(scores), data)
