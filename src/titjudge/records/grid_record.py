"""ablation.json: what an ablation grid's tables were made from, as one typed record.

`ablation.grid.grid_record` builds it from the grid's result (each row, each cell with the
pairs and prompts it stands on, its own chance thresholds, whether its accuracy could be
marked, where its scores came from); `GridRecord.write` writes ablation.json and
`GridRecord.read` reads it back (`titjudge runs list`, the tests, a researcher's script).
Every field is optional, so a grid dir an older release wrote, or one laid out by hand,
still reads; a file that does not fit is one line naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from titjudge.files import atomic_write, parse_record, read_json_object, to_json

GRID_FILE = "ablation.json"


class _GridPart(BaseModel):
    model_config = ConfigDict(extra="allow")


class GridColumn(_GridPart):
    """One comparer column (`records.ColumnInfo`)."""

    name: str
    label: str = ""
    kind: str = ""
    model: str | None = None


class GridMarks(_GridPart):
    """When a cell's accuracy may be marked best: it stands on at least `min_share_percent`
    of the best-covered cell's pairs (`best_covered_pairs`)."""

    min_share_percent: int | float | None = None
    best_covered_pairs: int | None = None


class GridCell(_GridPart):
    """One cell: a row's run scored by one column."""

    pairwise_accuracy: float | None = None
    n_pairs: int = 0
    n_prompts: int = 0
    n_prompts_ndcg: int = 0
    #: this cell's own chance thresholds (for its n_pairs)
    thresholds: dict[str, Any] | None = None
    markable: bool = False
    n_items: int = 0
    n_failed: int = 0
    n_fallback: int = 0
    #: where its scores came from, whether its model was stopped (`records.origins`)
    origin: dict[str, Any] | None = None
    first_error: str | None = None


class GridRow(_GridPart):
    """One VLM row: its run (rows/<name>/) and its cells."""

    name: str | None = None
    label: str | None = None
    model: str | None = None
    run_dir: str | None = None
    status: Literal["ok", "failed", "no_scores"] | None = None
    error: str | None = None
    n_items: int = 0
    n_failed_items: int = 0
    cells: dict[str, GridCell] = Field(default_factory=dict)
    #: the row run's metrics.json
    metrics: dict[str, Any] = Field(default_factory=dict)


class GridRecord(_GridPart):
    """ablation.json, field for field in the order it is written."""

    name: str | None = None
    columns: list[GridColumn] = Field(default_factory=list)
    disabled_columns: list[GridColumn] = Field(default_factory=list)
    shown_columns: list[str] = Field(default_factory=list)
    shown_rows: list[str] = Field(default_factory=list)
    #: for the best-covered cell's pairs; each cell's own are under its `thresholds`
    thresholds: dict[str, Any] | None = None
    marks: GridMarks | None = None
    rows: list[GridRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    #: `run.budget_usd`: the grid's budget, its spend and what it left undone (None: unset)
    budget: dict[str, Any] | None = None
    exit_code: int | None = None

    def write(self, out: Path) -> Path:
        path = out / GRID_FILE
        atomic_write(path, to_json(self.model_dump(mode="json")) + "\n")
        return path

    @classmethod
    def read(cls, grid: Path) -> GridRecord:
        """A grid dir's ablation.json; a DataError names the file and the first key that does
        not fit."""
        path = grid / GRID_FILE
        return parse_record(cls, read_json_object(path, "ablation file"), str(path))


__all__ = ["GRID_FILE", "GridCell", "GridColumn", "GridMarks", "GridRecord", "GridRow"]
