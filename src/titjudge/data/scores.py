"""Scores CSV: `item_id,variant,score,status`, one row per (item, variant).

`status` is `ok`, `fallback` (the score came from the judge's fallback comparer) or
`failed` (no score; metrics skip the item and reports count it). A failed item never
carries a number, so a crash can never pose as a low score.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import cast, get_args

from titjudge.data.pairs import iter_csv
from titjudge.errors import DataError, where
from titjudge.files import atomic_open
from titjudge.records.items import ScoreRow, ScoreStatus
from titjudge.records.origins import StatusCounts

SCORE_COLUMNS: tuple[str, ...] = ("item_id", "variant", "score", "status")
_STATUSES: tuple[str, ...] = get_args(ScoreStatus)


def _parse_score(text: str, status: str, location: str) -> float | None:
    if status == "failed":
        if text:
            raise DataError(f"{location}: status 'failed' must leave 'score' empty, got {text!r}")
        return None
    if not text:
        raise DataError(f"{location}: status {status!r} needs a score, 'score' is empty")
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{location}: score {text!r} is not a number") from None
    if not math.isfinite(value):
        raise DataError(f"{location}: score {text!r} is not finite")
    return value


def load_scores(path: str | os.PathLike[str]) -> list[ScoreRow]:
    """Read a scores CSV; any malformed row is a DataError naming file and line.

    Shares the pairs/ranks CSV reader: extra columns ignored, values stripped, blank
    lines skipped, missing columns and ragged rows rejected.
    """
    path = Path(path)
    rows: list[ScoreRow] = []
    seen: dict[tuple[str, str], int] = {}
    for line, record in iter_csv(path, SCORE_COLUMNS, "scores file"):
        location = where(path, line)
        item_id, variant, score_text, status = (record[name] for name in SCORE_COLUMNS)
        status = status.lower()
        if not item_id:
            raise DataError(f"{location}: field 'item_id' is empty")
        if not variant:
            raise DataError(f"{location}: field 'variant' is empty")
        if status not in _STATUSES:
            raise DataError(
                f"{location}: status must be one of {', '.join(_STATUSES)}; got {status!r}"
            )
        key = (item_id, variant)
        if key in seen:
            raise DataError(
                f"{location}: item {item_id!r} has a second {variant!r} score (first at line {seen[key]})"
            )
        seen[key] = line
        score = _parse_score(score_text, status, location)
        rows.append(ScoreRow(item_id, variant, score, cast(ScoreStatus, status)))
    return rows


def write_scores(rows: Iterable[ScoreRow], path: str | os.PathLike[str]) -> None:
    """Write rows atomically (temp file, then rename) so a crash never leaves half a file.

    Scores are written with `repr`, the shortest text that reads back to the same float.
    """
    with atomic_open(path) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        for row in rows:
            if (row.score is None) != (row.status == "failed"):
                raise ValueError(f"inconsistent score row {row}: only 'failed' rows have no score")
            writer.writerow(
                (row.item_id, row.variant, "" if row.score is None else repr(row.score), row.status)
            )


def scores_by_variant(
    rows: Iterable[ScoreRow], round_digits: int | None = None
) -> dict[str, dict[str, float]]:
    """Variant -> {item_id: score} over usable rows (ok and fallback); failed items are absent.

    `round_digits` rounds every score first, so that "equal" (a metric tie) can be
    defined at the judge's real resolution rather than float noise.
    """
    grouped: dict[str, dict[str, float]] = {}
    seen: set[tuple[str, str]] = set()
    for row in rows:
        if (row.item_id, row.variant) in seen:
            raise DataError(f"scores: item {row.item_id!r} has two {row.variant!r} scores")
        seen.add((row.item_id, row.variant))
        bucket = grouped.setdefault(row.variant, {})
        if row.score is not None and row.status != "failed":
            bucket[row.item_id] = (
                row.score if round_digits is None else round(row.score, round_digits)
            )
    return grouped


def status_counts(rows: Iterable[ScoreRow]) -> dict[str, StatusCounts]:
    """Each variant's items by status (ok, fallback, failed): what the reports must disclose,
    in the order the variants first appear."""
    counts: dict[str, StatusCounts] = {}
    for row in rows:
        counts.setdefault(row.variant, StatusCounts()).add(row.status)
    return counts
