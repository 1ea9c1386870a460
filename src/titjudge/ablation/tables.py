"""The ablation's tables (the paper's Tables 4, 2 and 3), built once for every writer.

A `Table` is built once from an `AblationResult` and written four ways (writers.py:
Markdown, CSV, LaTeX, rich), so the file a paper includes, the CSV a notebook reads and the terminal table never disagree. As in
the paper, the best value is bold and the second underlined; marks compare the values
as displayed, so two cells that print the same are marked the same. Every value shows the
pairs (or prompts) it stands on, a cell with under 90% of the best-covered cell's pairs is
never marked, and the chance thresholds are given for each cell's own pairs (coverage.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from titjudge.ablation.coverage import (
    MARK_MIN_PERCENT,
    chance_text,
    markable,
    rule_text,
)
from titjudge.metrics.catalog import PAIRS, table2_columns
from titjudge.records.percent import percent_of
from titjudge.records.run_record import Standing

if TYPE_CHECKING:
    from titjudge.records import AblationResult, CellResult

Mark = Literal["best", "second"]
MISSING = "–"  # en dash: a cell with no value (written '--' in LaTeX, empty in CSV)


@dataclass(frozen=True)
class Cell:
    """Displayed `text` (unescaped), the number behind it, a best/second mark and a suffix
    (e.g. ' (106 pairs, 3 failed)') that stays outside the mark."""

    text: str
    value: float | None = None
    mark: Mark | None = None
    suffix: str = ""


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[Cell]]
    label_columns: int  # leading text columns (left-aligned); the rest are numbers
    legend: str
    key: str  # LaTeX label suffix: tab:<key>
    csv_header: list[str]
    csv_rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)


def mark_best(
    values: Sequence[float | None],
    digits: int,
    eligible: Sequence[bool] | None = None,
    *,
    lower: bool = False,
) -> list[Mark | None]:
    """'best' for the highest displayed value(s) (the lowest where `lower` is better),
    'second' for the next distinct one, among the values `eligible` allows (all by
    default); the others are neither marked nor compared.

    Needs at least two values; with one there is nothing to compare.
    """
    allowed = eligible if eligible is not None else [True] * len(values)
    shown = [
        None if v is None or not ok else float(f"{v:.{digits}f}")
        for v, ok in zip(values, allowed, strict=True)
    ]
    present = [v for v in shown if v is not None]
    if len(present) < 2:
        return [None] * len(values)
    ranked = sorted(set(present), reverse=not lower)
    best, second = ranked[0], ranked[1] if len(ranked) > 1 else None
    return [
        "best" if v == best else "second" if v is not None and v == second else None for v in shown
    ]


def _number(value: float | None, digits: int) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def count_suffix(cell: CellResult) -> str:
    """' (n=106)' or ' (n=5, 51 failed, 40% fallback, stopped)': the human pairs an accuracy
    stands on, its failed items, the share of its scores from its fallback judge and whether
    its model was stopped (the notes say which fallback and why)."""
    failed = f", {cell.n_failed:,} failed" if cell.n_failed else ""
    origin = cell.origin
    if origin is not None and origin.n_fallback:
        failed += f", {origin.percent()} fallback"
    if origin is not None and origin.stopped:
        failed += ", stopped"
    return f" (n={cell.count('n_pairs'):,}{failed})"


def shown_cells(result: AblationResult) -> list[CellResult]:
    """Every cell the tables show a value for: the grid the 90% rule measures against."""
    return [
        row.cells[c.name]
        for row in result.shown_rows
        for c in result.shown_columns
        if row.cells[c.name].has_value
    ]


def accuracy_marks(result: AblationResult) -> list[list[Mark | None]]:
    """Table 4's marks (best and second in each row, among cells covered well enough), shared
    by the tables and the heatmap."""
    grid = shown_cells(result)
    marks = []
    for row in result.shown_rows:
        cells = [row.cells[c.name] for c in result.shown_columns]
        values = [percent_of(cell.accuracy) for cell in cells]
        marks.append(mark_best(values, 2, markable(cells, grid)))
    return marks


def chance_counts(result: AblationResult) -> dict[int, list[str]]:
    """The shown cells ('VLM x comparer') by the pairs they scored: the counts a legend
    must give a chance threshold for."""
    by_count: dict[int, list[str]] = {}
    for row in result.shown_rows:
        for column in result.shown_columns:
            cell = row.cells[column.name]
            if cell.has_value:
                by_count.setdefault(cell.count("n_pairs"), []).append(
                    f"{row.label} x {column.label}"
                )
    return by_count


def _chance_legend(result: AblationResult) -> str:
    """The chance thresholds for the pair count of every shown cell."""
    return chance_text(chance_counts(result))


def table4(result: AblationResult) -> Table:
    """Pairwise accuracy (%) per VLM (rows) and comparer (columns); marks per row."""
    columns = result.shown_columns
    rows, csv_rows = [], []
    for row, marks in zip(result.shown_rows, accuracy_marks(result), strict=True):
        cells = [row.cells[c.name] for c in columns]
        values = [percent_of(cell.accuracy) for cell in cells]
        rows.append(
            [Cell(row.label)]
            + [
                Cell(_number(v, 2), v, m, count_suffix(cell) if v is not None else "")
                for v, m, cell in zip(values, marks, cells, strict=True)
            ]
        )
        csv_rows.append(
            [
                row.label,
                *(None if v is None else round(v, 4) for v in values),
                *(cell.count("n_pairs") if cell.has_value else None for cell in cells),
                *(cell.n_failed for cell in cells),
            ]
        )
    reference = max((c.count("n_pairs") for c in shown_cells(result)), default=0)
    return Table(
        title="Table 4: pairwise accuracy (%) of each VLM backbone with each comparer",
        header=["VLM", *(c.label for c in columns)],
        rows=rows,
        label_columns=1,
        legend=(
            "Pairwise accuracy (%) against human preferences; n: the human pairs with both "
            f"images scored. {_chance_legend(result)} Bold: best in the row; underlined: "
            f"second best. {rule_text(reference)}"
        ),
        key="ablation-accuracy",
        csv_header=[
            "VLM",
            *(c.label for c in columns),
            *(f"pairs: {c.label}" for c in columns),
            *(f"failed: {c.label}" for c in columns),
        ],
        csv_rows=csv_rows,
        notes=list(result.notes),
    )


@dataclass(frozen=True)
class _Column:
    """A Table 2 column after VLM and Comparer: a metric (`scale` set) or a count."""

    heading: str
    key: str  # in the cell's metrics
    csv: str
    scale: float | None = None  # None: a count (pairs, prompts), shown whole
    digits: int = 0
    #: None: never marked (the tie rate, counts); "": marked among cells with enough pairs;
    #: a count key: that count must cover too (the prompts a rank metric averages over)
    marked_by: str | None = None
    lower: bool = False  # a lower value is better


def _table2() -> tuple[_Column, ...]:
    """Table 2's columns, from the metric catalog: each metric with a Table 2 heading, and
    after each run of metrics the count they stand on."""
    found = []
    for column in table2_columns():
        metric = column.metric
        if metric is None:
            found.append(_Column(column.heading, column.key, column.csv))
            continue
        count = metric.stands_on.name if metric.stands_on else PAIRS.name
        found.append(
            _Column(
                column.heading,
                column.key,
                column.csv,
                100.0 if metric.percent else 1.0,
                metric.digits,
                None if metric.better is None else "" if count == PAIRS.name else count,
                metric.better == "lower",
            )
        )
    return tuple(found)


def _metric(cell: CellResult, column: _Column) -> float | None:
    if column.scale is None:
        return cell.count(column.key)
    value = cell.metrics.get(column.key) if cell.metrics is not None else None
    return None if value is None else column.scale * value


def table2(result: AblationResult) -> Table:
    """Acc, metric ties, SRCC, KRCC and nDCG per (VLM, comparer), each beside the pairs or
    prompts it stands on; marks per metric over all cells covered well enough."""
    entries = [
        (row, column, row.cells[column.name])
        for row in result.shown_rows
        for column in result.shown_columns
        if row.cells[column.name].has_value
    ]
    grid = [cell for _, _, cell in entries]
    values = [[_metric(cell, spec) for spec in _table2()] for cell in grid]
    by_metric = [
        mark_best(
            [v[i] for v in values],
            spec.digits,
            markable(grid, grid, spec.marked_by or None),
            lower=spec.lower,
        )
        if spec.marked_by is not None
        else [None] * len(values)
        for i, spec in enumerate(_table2())
    ]
    rows, csv_rows = [], []
    for index, (row, column, cell) in enumerate(entries):
        shown = [
            Cell(_number(values[index][i], spec.digits), values[index][i], by_metric[i][index])
            if spec.scale is not None
            else Cell(f"{cell.count(spec.key):,}", cell.count(spec.key))
            for i, spec in enumerate(_table2())
        ]
        rows.append(
            [Cell(row.label), Cell(column.label), *shown, Cell(str(cell.n_failed), cell.n_failed)]
        )
        csv_rows.append(
            [
                row.label,
                column.label,
                *(
                    None if v is None else round(v, 6) if spec.scale is not None else int(v)
                    for v, spec in zip(values[index], _table2(), strict=True)
                ),
                cell.n_failed,
            ]
        )
    gain = (
        next((r.metrics.settings.gain for r in result.rows if r.metrics is not None), None)
        or "linear"
    )
    return Table(
        title="Table 2: agreement with humans per VLM and comparer",
        header=["VLM", "Comparer", *(spec.heading for spec in _table2()), "Failed"],
        rows=rows,
        label_columns=2,
        legend=(
            "Pairwise accuracy and metric-tie rate over the human pairs with both images scored "
            f"(Pairs); per-prompt SRCC and KRCC (over Prompts) and nDCG ({gain} gain, over nDCG "
            "prompts) averaged over prompts. Bold: best in the column; underlined: second best. "
            f"{rule_text(max((c.count('n_pairs') for c in grid), default=0))} A rank metric "
            f"is also left unmarked when its prompts are fewer than {MARK_MIN_PERCENT}% of the "
            "most any cell has."
        ),
        key="ablation-agreement",
        csv_header=["VLM", "Comparer", *(spec.csv for spec in _table2()), "n_failed"],
        csv_rows=csv_rows,
        notes=list(result.notes),
    )


def _ranked(standings: dict[str, Standing], model: str) -> Cell:
    """An average rank with the prompts it is averaged over: '2.10 (12)'."""
    standing = standings.get(model) or Standing()
    average, n = standing.average_rank, standing.n_prompts
    return Cell(_number(average, 2), average, None, f" ({n:,})" if average is not None else "")


def leaderboard(result: AblationResult) -> Table:
    """Average rank of each T2I model by humans and by each (VLM, comparer), with the SRCC
    between each model ranking and the human one (the paper's Table 3). Each average shows the
    prompts behind it, each ranker the human pairs its cell scored."""
    models = result.leaderboard_models
    boards = {
        row.name: row.metrics.leaderboard
        for row in result.rows
        if row.metrics is not None and row.metrics.leaderboard is not None
    }
    human = next((board.human for board in boards.values()), None)
    rankers: list[tuple[str, dict[str, Standing], float | None, CellResult]] = []
    for row in result.shown_rows:
        board = boards.get(row.name)
        for column in result.shown_columns:
            entry = board.variants.get(column.name) if board is not None else None
            cell = row.cells[column.name]
            if entry is not None and cell.has_value:
                name = f"{row.label} / {column.label}"
                rankers.append((name, entry.models, entry.srcc, cell))
    grid = [cell for *_, cell in rankers]
    marks = mark_best([srcc for _, _, srcc, _ in rankers], 4, markable(grid, grid))
    rows, csv_rows = [], []

    def add(name: str, standings: dict[str, Standing], srcc_cell: Cell, pairs: int | None) -> None:
        averages = [_ranked(standings, m) for m in models]
        rows.append([Cell(name), *averages, Cell("" if pairs is None else f"{pairs:,}"), srcc_cell])
        csv_rows.append(
            [
                name,
                *(None if a.value is None else round(a.value, 6) for a in averages),
                *((standings.get(m) or Standing()).n_prompts for m in models),
                pairs,
                None if srcc_cell.value is None else round(srcc_cell.value, 6),
            ]
        )

    if human is not None:
        add("Human", human, Cell(""), None)
    for (name, standings, srcc, cell), mark in zip(rankers, marks, strict=True):
        add(name, standings, Cell(_number(srcc, 4), srcc, mark), cell.count("n_pairs"))
    return Table(
        title="Table 3: T2I model leaderboard (average rank over prompts, 1 = best)",
        header=["Ranked by", *models, "Pairs", "SRCC"],
        rows=rows,
        label_columns=1,
        legend=(
            "Average rank of each T2I model over prompts (1 = best; in brackets, the prompts "
            "it is averaged over), by humans and by each (VLM, comparer); Pairs: the human "
            "pairs that cell scored; SRCC: Spearman correlation of that model ranking with the "
            "human one. Bold: best SRCC; underlined: second best. "
            f"{rule_text(max((c.count('n_pairs') for c in grid), default=0))}"
        ),
        key="ablation-leaderboard",
        csv_header=[
            "ranked_by",
            *models,
            *(f"prompts: {m}" for m in models),
            "n_pairs",
            "srcc_vs_human",
        ],
        csv_rows=csv_rows,
        notes=list(result.notes),
    )
