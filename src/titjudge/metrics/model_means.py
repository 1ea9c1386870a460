"""Per T2I model mean scores: what a run without human pairs can still say about the models.

Only `ok` rows count. A `fallback` score comes from another judge's scale and a `failed` row
has none, so both are left out of the means and counted per variant. Models are ranked by
mean score, highest first; equal means share a rank (1, 1, 3).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from titjudge.records.items import ScoreRow


def model_means(rows: Sequence[ScoreRow], models: Mapping[str, str]) -> dict[str, Any]:
    """Per variant: `models` (model -> mean, n) ranked by mean, and the rows left out.

    `models` maps item id -> T2I model. Shape::

        {variant: {"ranking": [{"model", "mean", "n", "rank"}, ...],   # best mean first
                   "n_failed_left_out": int, "n_fallback_left_out": int}}
    """
    scores: dict[str, dict[str, list[float]]] = {}
    left_out: dict[str, dict[str, int]] = {}
    for row in rows:
        per_model = scores.setdefault(row.variant, {})
        skipped = left_out.setdefault(row.variant, {"failed": 0, "fallback": 0})
        if row.status != "ok" or row.score is None or not math.isfinite(row.score):
            skipped["fallback" if row.status == "fallback" else "failed"] += 1
            continue
        per_model.setdefault(models[row.item_id], []).append(row.score)
    summary = {}
    for variant, per_model in scores.items():
        means = sorted(
            ((statistics.fmean(values), model, len(values)) for model, values in per_model.items()),
            key=lambda entry: (-entry[0], entry[1]),
        )
        ranking: list[dict[str, Any]] = []
        for position, (mean, model, n) in enumerate(means, start=1):
            rank = ranking[-1]["rank"] if ranking and ranking[-1]["mean"] == mean else position
            ranking.append({"model": model, "mean": mean, "n": n, "rank": rank})
        summary[variant] = {
            "ranking": ranking,
            "n_failed_left_out": left_out[variant]["failed"],
            "n_fallback_left_out": left_out[variant]["fallback"],
        }
    return summary
