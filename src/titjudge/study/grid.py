"""An ablation grid as one pack, and its tables re-derived from it.

A grid pack holds `grid/`: the grid's ablation.json and its tables (table4, table2 and the
leaderboard as .md, .csv and .tex), and under `rows/<row>/` each row's run packed as a run
is (`study.pack.pack_entries`: its run, data, templates and versions). Reproducing it
re-derives each row's record from its own entries (`study.reproduce.rederive`), then the
grid from the rows, by the code a grid writes its tables with (`ablation.grid`: each row's
cells, the notes, the marks; `write_outputs`), and compares every row's numbers, every value
of ablation.json (but where the row runs were) and every table file, byte for byte.
Nothing here asks a model: `ablation.grid` is imported for its table code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from titjudge.errors import DataError
from titjudge.study.reproduce import Pack, compare, differences, rederive, write_reproduced

#: the grid's files a pack holds and reproduce writes again (table4.png is drawn, not compared)
GRID_TABLES = tuple(
    f"{stem}.{ext}" for stem in ("table4", "table2", "leaderboard") for ext in ("md", "csv", "tex")
)


def is_grid(path: Path) -> bool:
    return (path / "ablation.json").is_file() and (path / "rows").is_dir()


def grid_entries(
    grid: Path, with_images: bool
) -> tuple[dict[str, bytes], list[str], int, list[str]]:
    """Every entry of a grid's pack but the manifest: its tables, each row packed; the notes,
    the images held and the rows' names."""
    from titjudge.records.grid_record import GridRecord
    from titjudge.study.pack import pack_entries

    record = GridRecord.read(grid)
    entries: dict[str, bytes] = {"grid/ablation.json": (grid / "ablation.json").read_bytes()}
    for name in GRID_TABLES:
        if (grid / name).is_file():
            entries[f"grid/{name}"] = (grid / name).read_bytes()
    notes, images, names = [], 0, []
    for row in record.rows:
        if row.name is None or row.status == "failed":
            notes.append(f"row {row.name}: not packed (it did not run: {row.error})")
            continue
        found, row_notes, held = pack_entries(grid / "rows" / row.name, with_images)
        entries.update({f"rows/{row.name}/{k}": v for k, v in found.items()})
        notes += [f"row {row.name}: {n}" for n in row_notes]
        images += held
        names.append(row.name)
    return entries, notes, images, names


@dataclass(frozen=True)
class _Row:
    """What the grid's table code reads of a row's config: its name, heading and model."""

    name: str
    heading: str
    model: str


def reproduce_grid(pack: Pack, out: Path) -> list[str]:
    """Each row and the grid re-derived into `out` (out/rows/<row>/run, out/grid); every
    difference with the pack's, one line each."""
    from titjudge.ablation.grid import RowRun, grid_notes, row_result, write_outputs
    from titjudge.records import AblationResult, ColumnInfo
    from titjudge.records.grid_record import GridRecord
    from titjudge.report.run_summary import load_summary

    packed = GridRecord.read(pack.folder / "grid")
    found: list[str] = []
    runs = []
    for row in packed.rows:
        if row.name is None or not (pack.folder / "rows" / row.name).is_dir():
            continue
        part = Pack(pack.path, pack.manifest, pack.folder / "rows" / row.name)
        record = rederive(part)
        record.summary = load_summary(part.run)
        run_dir = write_reproduced(part, record, out / "rows" / row.name)
        found += [f"row {row.name}: {line}" for line in compare(part, run_dir)]
        described = _Row(row.name, row.label or row.name, row.model or "")
        runs.append(RowRun(row=cast(Any, described), run_dir=run_dir, record=record))
    columns = [ColumnInfo(**c.model_dump()) for c in packed.columns]
    result = AblationResult(
        name=packed.name or "grid",
        out_dir=out / "grid",
        columns=columns,
        disabled=[ColumnInfo(**c.model_dump()) for c in packed.disabled_columns],
        rows=[row_result(r, columns) for r in runs],
        budget=packed.budget,
    )
    result.notes = grid_notes(result)
    result.out_dir.mkdir(parents=True, exist_ok=True)
    write_outputs(result)
    again = json.loads((out / "grid" / "ablation.json").read_text(encoding="utf-8"))
    before = json.loads((pack.folder / "grid" / "ablation.json").read_text(encoding="utf-8"))
    for doc in (again, before):
        for row in doc.get("rows", []):
            row.pop("run_dir", None)  # where the row ran: a path on each machine
    found += differences("ablation.json", before, again)
    for name in GRID_TABLES:
        mine, theirs = out / "grid" / name, pack.folder / "grid" / name
        if theirs.is_file() and (not mine.is_file() or mine.read_bytes() != theirs.read_bytes()):
            found.append(f"{name}: differs from the pack's")
    return found


def build_grid_pack(grid: Path, out: Path, with_images: bool = False) -> Any:
    """The pack of an ablation grid (its tables and each row's run) written to `out`."""
    from titjudge.study.pack import write_pack

    entries, notes, images, names = grid_entries(grid, with_images)
    if not names:
        raise DataError(f"{grid}: no row of the grid ran; nothing to pack")
    about = {"kind": "grid", "rows": names, "with_images": with_images}
    return write_pack(out, entries, notes, images, about)


def check_grid_pack(pack: Pack) -> None:
    if not (pack.folder / "grid" / "ablation.json").is_file():
        raise DataError(f"{pack.path}: a grid pack without grid/ablation.json; refused")


__all__ = [
    "GRID_TABLES",
    "build_grid_pack",
    "check_grid_pack",
    "grid_entries",
    "is_grid",
    "reproduce_grid",
]
