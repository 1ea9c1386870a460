"""Records that cross stages: what the graph produces for an item and for a run, and what the
ablation grid produces per cell, row and grid. Stages import these; these import only leaf
records (data items, judge outcomes), so every package can depend on them without a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.data.records import Item, ScoreRow
from titjudge.judges.base import Described, JudgeOutcome
from titjudge.judges.pairwise import PairwiseRun
from titjudge.models.results import Usage


@dataclass
class ItemResult:
    """Everything the run knows about one item after the judge step."""

    item: Item
    described: Described
    outcomes: list[JudgeOutcome]
    image_error: str | None = None

    @property
    def failed(self) -> bool:
        """The one definition of a failed item: its description failed (a skipped one, which
        no judge reads, is not a failure) or any of its judges failed. The progress bar, the
        run's summary and exit code, and `titjudge score` all count this."""
        return self.described.failed or any(o.status == "failed" for o in self.outcomes)


@dataclass
class RunEvaluation:
    """What the evaluator hands the run writer: items in item-id order with the pairwise
    judges' per-item outcomes attached, their score rows, the metrics ({} without human
    data), the pairwise runs, per-variant status counts and the failed-item count."""

    results: list[ItemResult]
    rows: list[ScoreRow]
    metrics: dict[str, Any]
    pairwise: dict[str, PairwiseRun]
    status_counts: dict[str, dict[str, int]]
    n_failed_items: int


@dataclass
class Progress:
    """Counters the progress bar reads; updated from the event loop only."""

    total: int = 0
    done: int = 0
    failed_items: int = 0
    pairs_total: int = 0
    pairs_done: int = 0
    #: what the run's model calls took so far (the hub's ledgers since the run started)
    spent: Callable[[], Usage] = Usage
    on_update: Callable[[Progress], None] | None = None

    def pairs_judged(self, count: int) -> None:
        self.pairs_done += count
        if self.on_update is not None:
            self.on_update(self)

    def item_done(self, result: ItemResult) -> None:
        self.done += 1
        self.failed_items += result.failed
        if self.on_update is not None:
            self.on_update(self)

    def info(self) -> str:
        """The progress bar's text: failures, cache hits of calls, spend, pairs."""
        usage = self.spent()
        info = (
            f"failed {self.failed_items} · cache hits {usage.cache_hits}/{usage.calls} · "
            f"spend {usage.cost_text()}"
        )
        if self.pairs_total:
            info += f" · pairs {self.pairs_done}/{self.pairs_total}"
        return info


@dataclass(frozen=True)
class ColumnInfo:
    """One comparer column as the tables show it."""

    name: str
    label: str
    kind: str
    model: str | None


@dataclass
class CellResult:
    """One (VLM, comparer) cell: the variant's metrics in that row's run."""

    n_items: int = 0
    n_failed: int = 0
    n_fallback: int = 0
    metrics: dict[str, Any] | None = None
    error: str | None = None

    @property
    def accuracy(self) -> float | None:
        return None if self.metrics is None else self.metrics.get("pairwise_accuracy")

    @property
    def has_value(self) -> bool:
        return self.accuracy is not None


@dataclass
class RowResult:
    """One VLM row: its run dir and cells, or why it failed as a whole."""

    name: str
    label: str
    model: str
    run_dir: Path
    error: str | None = None
    n_items: int = 0
    n_failed_items: int = 0
    cells: dict[str, CellResult] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def has_value(self) -> bool:
        return any(cell.has_value for cell in self.cells.values())


@dataclass
class AblationResult:
    name: str
    out_dir: Path
    columns: list[ColumnInfo]
    disabled: list[ColumnInfo]
    rows: list[RowResult]
    notes: list[str] = field(default_factory=list)

    @property
    def shown_columns(self) -> list[ColumnInfo]:
        """Columns with a score in at least one row, in config order."""
        return [
            c
            for c in self.columns
            if any(r.cells.get(c.name, CellResult()).has_value for r in self.rows)
        ]

    @property
    def shown_rows(self) -> list[RowResult]:
        return [r for r in self.rows if r.has_value]

    @property
    def n_failed_items(self) -> int:
        return sum(r.n_failed_items for r in self.rows)

    @property
    def exit_code(self) -> int:
        """1 when any item failed or any row could not run at all, else 0."""
        return 1 if self.n_failed_items or any(r.error for r in self.rows) else 0

    @property
    def thresholds(self) -> dict[str, Any] | None:
        """Chance thresholds for the largest pair count of any row (rows share the human pairs)."""
        found = [r.metrics["thresholds"] for r in self.rows if r.metrics.get("thresholds")]
        return max(found, key=lambda t: t["n_pairs"], default=None)

    @property
    def leaderboard_models(self) -> list[str]:
        for row in self.rows:
            board = row.metrics.get("leaderboard")
            if board:
                return list(board["models"])
        return []
