"""The ablation grid (the paper's Table 4, with Tables 2 and 3): one run per VLM row.

Each row is an ordinary run (`run_async`) over the same data and the same cache, with
every enabled comparer as a judge; lmm and self_eval bind to that row's VLM. So each
description is made once per (image, VLM) and read by every column of its row, an
embedding of a prompt is computed once for all rows, and a repeated ablation is served
entirely from the cache. Rows run one after another: local VLMs do not all fit in memory
at once, and API rows keep their own rate limits.

A row that fails entirely (describer misconfigured or unreachable) is recorded and the
grid carries on; a column without any score is omitted with a note, never filled in.

The grid is two steps over one context: `run_rows` runs the rows one after another (each row
routes its items through the run graph of `agents`) and `evaluate_grid` turns their outcomes
into what Tables 2-4 are made from (a cell per row and column, the rows' metrics, the notes).
The steps themselves are plain sequential code: a LangGraph graph of two nodes in a line
added only its import (1.8 s, more than a whole cached row) and nothing it could route.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from titjudge.ablation.config import AblationConfig, AblationDescriber, row_run_config
from titjudge.cache.store import CacheError
from titjudge.config.load import dump_config
from titjudge.errors import TitjudgeError
from titjudge.files import atomic_write
from titjudge.metrics.evaluate import HumanData
from titjudge.models.core.base import MissingCredentialsError
from titjudge.models.hub import ModelHub
from titjudge.records import AblationResult, CellResult, ColumnInfo, RowResult, cache_counts
from titjudge.records.grid_record import GridCell, GridColumn, GridMarks, GridRecord, GridRow
from titjudge.records.items import Item
from titjudge.records.origins import StatusCounts
from titjudge.records.run_record import RunRecord
from titjudge.report import runs
from titjudge.report.run_files import write_run_files
from titjudge.run.context import run_hub
from titjudge.run.runner import ShowProgress, load_run_data, run_async

log = logging.getLogger(__name__)
#: longest error text quoted in a note (full reasons are in the row's items.jsonl)
NOTE_ERROR_CHARS = 200


def _short(text: str | None) -> str:
    text = " ".join((text or "unknown error").split())
    return text if len(text) <= NOTE_ERROR_CHARS else text[: NOTE_ERROR_CHARS - 3] + "..."


def _cells(record: RunRecord, columns: list[ColumnInfo]) -> dict[str, CellResult]:
    first_error: dict[str, str] = {}
    for line in record.item_lines:
        if line.status == "failed" and line.variant not in first_error:
            first_error[line.variant] = line.error or "failed"
    cells = {}
    # each cell is its variant's entry in the row run's record (metrics.json), as written
    variants, summary = record.variants, record.summary
    assert summary is not None, "a finished run's record holds its summary"
    for column in columns:
        counts = summary.variants.get(column.name) or StatusCounts()
        entry = variants.get(column.name)
        cells[column.name] = CellResult(
            n_items=counts.total,
            n_failed=counts.failed,
            n_fallback=counts.fallback,
            metrics=entry,
            error=first_error.get(column.name),
            origin=record.origin(column.name),
        )
    return cells


@dataclass
class RowRun:
    """One row as it ran: its run's record, or why it could not run at all."""

    row: AblationDescriber
    run_dir: Path
    record: RunRecord | None = None
    error: str | None = None


@dataclass
class GridContext:
    """The grid's fixed inputs, read by both steps."""

    config: AblationConfig
    columns: list[ColumnInfo]
    disabled: list[ColumnInfo]
    #: where the grid writes (its staging dir) and where it lands once complete
    out_dir: Path
    final_dir: Path
    hub: ModelHub
    #: the items and human data every row runs on, read once for the grid
    data: tuple[list[Item], HumanData | None]
    limit: int | None = None
    show_progress: bool = False
    on_row: Callable[[int, int, AblationDescriber], None] | None = None


async def run_row(ctx: GridContext, row: AblationDescriber, title: str = "") -> RowRun:
    """Run one VLM row; a row that cannot run at all is returned with its error, not raised.
    `title` names the row in its progress display (`row 2/3 sharp`)."""
    found = RowRun(row=row, run_dir=ctx.final_dir / "rows" / row.name)
    try:
        found.record = await run_async(
            row_run_config(ctx.config, row),
            limit=ctx.limit,
            out=ctx.out_dir / "rows" / row.name,
            progress=ShowProgress(title=title) if ctx.show_progress else None,
            bootstrap=ctx.config.bootstrap,
            hub=ctx.hub,
            data=ctx.data,
        )
    except (CacheError, MissingCredentialsError):  # the shared cache cannot be used (no later
        raise  # row could store its answers), or a call must be sent without its key: exit 2
    except TitjudgeError as exc:
        found.error = str(exc)
    except Exception as exc:  # one broken backend must not lose the other rows of a long grid
        log.exception("ablation row %s crashed", row.name)
        found.error = f"internal error: {type(exc).__name__}: {exc}"
    return found


async def run_rows(ctx: GridContext) -> list[RowRun]:
    """Every enabled row, one after another; a row's own VLM is released when it ends."""
    rows = ctx.config.rows
    shared_models = {c.own_model for c in ctx.config.columns if c.own_model}
    runs = []
    for index, row in enumerate(rows):
        if ctx.on_row is not None:
            ctx.on_row(index, len(rows), row)
        runs.append(await run_row(ctx, row, f"row {index + 1}/{len(rows)} {row.name}"))
        if row.model not in shared_models:
            await ctx.hub.release(row.model)
    return runs


def row_result(found: RowRun, columns: list[ColumnInfo]) -> RowResult:
    """A row's cells (one per column) and metrics, from its run's record."""
    row = found.row
    result = RowResult(
        name=row.name, label=row.heading, model=row.model, run_dir=found.run_dir, error=found.error
    )
    if found.record is not None and found.record.summary is not None:
        record, summary = found.record, found.record.summary
        result.n_items, result.n_failed_items = summary.items, summary.failed_items
        result.cells = _cells(record, columns)
        result.metrics = record
        result.degraded = summary.degraded
    return result


def evaluate_grid(ctx: GridContext, runs: list[RowRun]) -> AblationResult:
    """The grid's cells, rows' metrics and notes, from the rows' runs."""
    result = AblationResult(
        name=ctx.config.name,
        out_dir=ctx.out_dir,
        columns=ctx.columns,
        disabled=ctx.disabled,
        rows=[row_result(found, ctx.columns) for found in runs],
    )
    result.notes = grid_notes(result)
    return result


def _cell_reason(cell: CellResult) -> str:
    """Why a cell has no score: its first failure, else where its scores came from."""
    if cell.error is None and cell.origin is not None and cell.origin.reasons():
        return "; ".join(cell.origin.reasons())
    return _short(cell.error)


def grid_notes(result: AblationResult) -> list[str]:
    """What the tables leave out and why: disabled or empty columns, failed rows and cells."""
    notes = [
        f"column {c.label!r} ({c.name}) is switched off in the config" for c in result.disabled
    ]
    for row in result.rows:
        if row.error is not None:
            notes.append(f"row {row.label!r} failed and is omitted: {_short(row.error)}")
        elif not row.has_value:
            errors = [c.error for c in row.cells.values() if c.error]
            notes.append(
                f"row {row.label!r} produced no score and is omitted: every item failed "
                f"({_short(errors[0] if errors else None)})"
            )
    shown = {c.name for c in result.shown_columns}
    live_rows = [r for r in result.rows if r.error is None and r.has_value]
    for column in result.columns:
        if column.name not in shown:
            reasons = [
                f"{r.label}: {_cell_reason(r.cells[column.name])}"
                for r in live_rows
                if column.name in r.cells
            ]
            why = f" ({reasons[0]})" if reasons else ""
            notes.append(
                f"column {column.label!r} omitted: its judge produced no score in any row{why}"
            )
            continue
        for row in live_rows:
            cell = row.cells[column.name]
            origin = "; ".join(cell.origin.reasons()) if cell.origin is not None else ""
            if not cell.has_value:
                reason = (
                    f"all {cell.n_failed} items failed: {_short(cell.error)}"
                    if cell.n_failed == cell.n_items
                    else origin
                    if cell.origin is not None and cell.origin.fallback_only
                    else "no human pair has both images scored"
                )
                notes.append(f"{row.label} x {column.label}: no score ({reason})")
            elif origin:  # a number, and whose scores it stands on
                notes.append(f"{row.label} x {column.label}: {origin}")
    if any(c.n_failed for r in live_rows for c in r.cells.values() if c.has_value):
        notes.append(
            "'N failed': items a judge could not score, left out of that cell's pairs; "
            "reasons in rows/<describer>/items.jsonl"
        )
    if not result.shown_rows:
        notes.append("no cell has a score, so the tables are empty and table4.png is not drawn")
    return notes


async def run_ablation_async(
    config: AblationConfig,
    *,
    out: Path | None = None,
    limit: int | None = None,
    show_progress: bool = False,
    on_row: Callable[[int, int, AblationDescriber], None] | None = None,
) -> AblationResult:
    """Run every enabled row, then write tables, heatmap and ablation.json into the grid's
    dir: `<run.out>/<name>/<run id>/` (`report.runs`), or exactly `out`. The whole grid, its
    rows' run dirs under `rows/` included, is staged and moved into place at the end."""
    # a data problem is the user's and would fail every row alike: stop before anything (exit 2).
    # Every row runs on the same data section, so it is read once here for all of them.
    data = load_run_data(row_run_config(config, config.rows[0]), limit)
    staged = (
        runs.stage_run(exact=out)
        if out is not None
        else runs.stage_run(history=config.run.out / config.name)
    )
    try:
        result = await _run_staged(config, staged, data, limit, show_progress, on_row)
        result.out_dir = staged.staging
        write_outputs(result)
        write_run_files(staged.staging)  # last: the grid's own files (each row lists its own)
        result.out_dir = staged.commit()
    except BaseException:  # a failed or interrupted grid leaves no half grid behind
        staged.discard()
        raise
    return result


async def _run_staged(
    config: AblationConfig,
    staged: runs.StagedRun,
    data: tuple[list[Item], HumanData | None],
    limit: int | None,
    show_progress: bool,
    on_row: Callable[[int, int, AblationDescriber], None] | None,
) -> AblationResult:
    """Every row, written into the staging dir; rows' run dirs are named where they land."""
    labels = config.labels()
    atomic_write(staged.staging / "ablation.yaml", dump_config(config))
    # One hub for the grid: a comparer model (a local Qwen3-8B judge, an embedding model)
    # loads once, not once per row; each row's own VLM is released when its row ends.
    hub = run_hub(config.run)  # one ledger for the whole grid: every row's calls draw on it
    cache = hub.cache
    ctx = GridContext(
        config=config,
        columns=[ColumnInfo(c.name, labels[c.name], c.kind, c.own_model) for c in config.columns],
        disabled=[
            ColumnInfo(c.name, c.label or c.name, c.kind, c.own_model)
            for c in config.comparers
            if not c.enabled
        ],
        out_dir=staged.staging,
        final_dir=staged.target,
        hub=hub,
        data=data,
        limit=limit,
        show_progress=show_progress,
        on_row=on_row,
    )
    try:
        rows = await run_rows(ctx)
        result = evaluate_grid(ctx, rows)
        if hub.budget is not None:
            budgets = [
                found.record.summary.budget
                for found in rows
                if found.record is not None
                and found.record.summary is not None
                and found.record.summary.budget is not None
            ]
            result.budget = {
                **hub.budget.to_json(),
                "items_undone": sum(budget.items_undone for budget in budgets),
                "pairs_undone": sum(budget.pairs_undone for budget in budgets),
            }
        return result
    finally:
        cache.save_run_stats(config.name, cache_counts(hub.usage_by_model(), cache.stats.writes))
        await hub.aclose()
        cache.close()


def grid_record(result: AblationResult) -> GridRecord:
    """ablation.json's record: everything the tables were made from, per row and cell: each
    cell with the pairs and prompts it stands on, its own chance thresholds, and whether its
    accuracy could be marked (MARK_MIN_PERCENT of the best-covered cell's pairs)."""
    from titjudge.ablation.coverage import MARK_MIN_PERCENT, best_covered, covered

    reference = best_covered(c for r in result.shown_rows for c in r.cells.values())

    def cell_record(cell: CellResult) -> GridCell:
        metrics = cell.metrics
        return GridCell(
            pairwise_accuracy=cell.accuracy,
            n_pairs=cell.count("n_pairs"),
            n_prompts=cell.count("n_prompts"),
            n_prompts_ndcg=cell.count("n_prompts_ndcg"),
            thresholds=(
                metrics.thresholds.model_dump()
                if metrics is not None and metrics.thresholds is not None
                else None
            ),
            markable=cell.has_value and covered(cell.count("n_pairs"), reference),
            n_items=cell.n_items,
            n_failed=cell.n_failed,
            n_fallback=cell.n_fallback,
            origin=cell.origin.model_dump(mode="json") if cell.origin else None,
            first_error=cell.error,
        )

    def row_record(row: RowResult) -> GridRow:
        status = "failed" if row.error is not None else "ok" if row.has_value else "no_scores"
        return GridRow(
            name=row.name,
            label=row.label,
            model=row.model,
            run_dir=str(row.run_dir),
            status=status,
            error=row.error,
            n_items=row.n_items,
            n_failed_items=row.n_failed_items,
            cells={name: cell_record(cell) for name, cell in row.cells.items()},
            metrics=row.metrics.metrics_json() if row.metrics is not None else {},
        )

    return GridRecord(
        name=result.name,
        columns=[GridColumn(**vars(c)) for c in result.columns],
        disabled_columns=[GridColumn(**vars(c)) for c in result.disabled],
        shown_columns=[c.name for c in result.shown_columns],
        shown_rows=[r.name for r in result.shown_rows],
        thresholds=None if result.thresholds is None else result.thresholds.model_dump(),
        marks=GridMarks(min_share_percent=MARK_MIN_PERCENT, best_covered_pairs=reference),
        rows=[row_record(row) for row in result.rows],
        notes=result.notes,
        budget=result.budget,
        exit_code=result.exit_code,
    )


def write_outputs(result: AblationResult) -> None:
    """table4/table2/leaderboard as .md/.csv/.tex, table4.png and ablation.json."""
    from titjudge.ablation import tables
    from titjudge.ablation.heatmap import write_heatmap
    from titjudge.ablation.writers import write_table

    out = result.out_dir
    for stem, table in (
        ("table4", tables.table4(result)),
        ("table2", tables.table2(result)),
        ("leaderboard", tables.leaderboard(result)),
    ):
        write_table(table, out, stem)
    write_heatmap(result, out / "table4.png")
    grid_record(result).write(out)
