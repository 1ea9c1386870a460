"""Names a run's records keep for themselves (kept low: the metrics write them, the judge
options refuse them)."""

from __future__ import annotations

#: metrics.json's top-level keys beside the variants (`metrics.summary`): a judge (a variant)
#: of one of these names would overwrite them, so no judge or comparer may take one
RESERVED_NAMES: tuple[str, ...] = ("thresholds", "leaderboard", "comparisons", "settings", "notes")
