"""Pairwise accuracy, rank correlations, nDCG, significance, leaderboard.

One module per idea: `pairwise` (accuracy, metric ties, tie calibration),
`significance` (chance thresholds, binomial p-value), `correlation` (SRCC/KRCC),
`ndcg`, `bootstrap` (CIs over prompts), `compare` (McNemar), `leaderboard` (Table 3),
`summary` (`evaluate`: all of it as the run record, `records.run_record.RunRecord`). Library functions take
in-memory records (`titjudge.records.items`); file I/O lives in `titjudge.data`.
"""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
