"""Pairwise accuracy, rank correlations, nDCG, significance, leaderboard.

One module per idea: `pairwise` (accuracy, metric ties, tie calibration),
`significance` (chance thresholds, binomial p-value), `correlation` (SRCC/KRCC),
`ndcg`, `bootstrap` (CIs over prompts), `compare` (McNemar), `leaderboard` (Table 3),
`summary` (`evaluate`: all of it as the run record, `records.run_record.RunRecord`). Library functions take
in-memory records (`titjudge.records.items`); file I/O lives in `titjudge.data`.
"""

from titjudge.metrics.compare import compare_variants
from titjudge.metrics.correlation import CorrelationResult, rank_correlations
from titjudge.metrics.leaderboard import model_leaderboard
from titjudge.metrics.ndcg import NdcgResult, mean_ndcg
from titjudge.metrics.pairwise import (
    PairwiseResult,
    TieCalibration,
    pairwise_accuracy,
    tie_calibrated_accuracy,
)
from titjudge.metrics.significance import binomial_p_value, significance_thresholds
from titjudge.metrics.summary import evaluate, to_json

__all__ = [
    "CorrelationResult",
    "NdcgResult",
    "PairwiseResult",
    "TieCalibration",
    "binomial_p_value",
    "compare_variants",
    "evaluate",
    "mean_ndcg",
    "model_leaderboard",
    "pairwise_accuracy",
    "rank_correlations",
    "significance_thresholds",
    "tie_calibrated_accuracy",
    "to_json",
]
