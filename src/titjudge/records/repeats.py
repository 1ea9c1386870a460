"""The statistics of a repeated judge's samples as recorded in its outcomes: their spread
(`spread`), how many there were (`repeat_count`) and the score rows of one sample alone
(`repeat_score_rows`, the input of the metric's spread across repeats). Kept low, below the
judge that samples (`titjudge.judges.repeats`), so the metrics read recorded outcomes without
importing a judge.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from titjudge.records.items import ScoreRow
from titjudge.records.outcomes import JudgeOutcome


def spread(values: Sequence[float]) -> dict[str, float | None]:
    """Median, sample stdev, IQR, min and max of the successful samples' scores."""
    if not values:
        return {"median": None, "stdev": None, "iqr": None, "min": None, "max": None}
    import numpy as np  # here: judge configs import this module, the preflight need not load numpy

    q1, q3 = np.percentile(np.asarray(values, dtype=float), [25, 75])
    return {
        "median": float(statistics.median(values)),
        "stdev": float(statistics.stdev(values)) if len(values) > 1 else 0.0,
        "iqr": float(q3 - q1),
        "min": float(min(values)),
        "max": float(max(values)),
    }


def repeat_count(outcomes: Sequence[JudgeOutcome]) -> int:
    """N when these outcomes come from a repeated judge, else 0."""
    return max(
        (int(o.details["repeats"]["n"]) for o in outcomes if "repeats" in o.details), default=0
    )


def repeat_score_rows(
    item_ids: Sequence[str], outcomes: Sequence[JudgeOutcome], variant: str, sample: int
) -> list[ScoreRow]:
    """Score rows using only sample `sample` of every item (fallback or failed items: failed)."""
    rows = []
    for item_id, outcome in zip(item_ids, outcomes, strict=True):
        scores = (
            outcome.details.get("repeats", {}).get("scores", []) if outcome.status == "ok" else []
        )
        score = scores[sample] if sample < len(scores) else None
        rows.append(ScoreRow(item_id, variant, score, "ok" if score is not None else "failed"))
    return rows
