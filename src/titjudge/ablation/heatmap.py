"""Table 4 as a heatmap: rows VLMs, columns comparers, one annotated cell each.

The colour scale diverges at 50% (chance): blue cells beat chance, red ones fall below,
white sits at chance, so the paper's finding (LMM Score far below 50% for most VLMs)
reads at a glance. Each cell shows the human pairs it stands on (n=...); it is bold as
Table 4 marks it (`accuracy_marks`: never with under 90% of the best-covered cell's pairs), and
the caption gives the chance threshold for each pair count shown. matplotlib is imported here
only, and drawn with its Agg canvas on a bare `Figure` (no pyplot global state), so it works
headless and in threads.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from titjudge.ablation.coverage import best_covered, chance_text, rule_text
from titjudge.ablation.tables import Mark, accuracy_marks, chance_counts, shown_cells
from titjudge.files import atomic_open
from titjudge.metrics.significance import significance_thresholds

if TYPE_CHECKING:
    from titjudge.records import AblationResult, CellResult

CHANCE = 50.0
#: the PNG text key holding the digest of what the heatmap was drawn from
DIGEST_KEY = "titjudge-drawn-from"
#: bump when the drawing code changes, so a heatmap drawn the old way is drawn again
DRAWING = 2
#: smallest half-width of the colour scale around chance, in accuracy points
MIN_SPAN = 10.0
#: the caption's font size (points) and the characters of it that fit in an inch of width
CAPTION_POINTS = 8.0
CAPTION_CHARS_PER_INCH = 17.0


def colour_span(values: Sequence[float | None]) -> float:
    """Half-width of a scale centred on chance that holds every value, rounded up to 5 points."""
    spread = max((abs(v - CHANCE) for v in values if v is not None), default=0.0)
    return max(MIN_SPAN, 5.0 * -(-spread // 5.0))


@dataclass(frozen=True)
class HeatmapCells:
    """What the heatmap's cells show: accuracies in percent (None = no score), the note
    under each number, which cells are bold ('best') and the rows' and columns' labels."""

    values: Sequence[Sequence[float | None]]
    notes: Sequence[Sequence[str]]
    marks: Sequence[Sequence[Mark | None]]
    row_labels: Sequence[str]
    column_labels: Sequence[str]


def plot_accuracy_heatmap(
    cells: HeatmapCells,
    path: Path,
    *,
    title: str,
    caption: str,
    threshold: float | None = None,
) -> Path:
    """Draw `cells`' accuracies with their notes under each number, bold where marked 'best',
    a dashed 95% line at `threshold` and `caption` below; write a PNG.

    The PNG keeps a digest of what it was drawn from (and matplotlib's version); when `path`
    already holds one drawn from the same, it is left as it is and matplotlib is not even
    imported (a cached re-run of a grid draws nothing new)."""
    values, notes, marks = cells.values, cells.notes, cells.marks
    row_labels, column_labels = cells.row_labels, cells.column_labels
    drawn = _digest(values, row_labels, column_labels, notes, title, marks, caption, threshold)
    if _drawn_from(path) == drawn:
        return path
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    n_rows, n_cols = len(row_labels), len(column_labels)
    flat = [v for row in values for v in row]
    span = colour_span(flat)
    norm = Normalize(CHANCE - span, CHANCE + span)
    width, height = 2.4 + 1.45 * n_cols, 1.9 + 0.62 * n_rows
    lines = textwrap.wrap(caption, int(width * CAPTION_CHARS_PER_INCH)) or [""]
    below = (len(lines) * CAPTION_POINTS * 1.3 + 6) / 72  # inches the caption takes
    fig = Figure(figsize=(width, height + below))
    bottom = below / (height + below)  # rect: left, bottom, width, height
    fig.set_layout_engine("constrained", rect=(0, bottom, 1, 1 - bottom))
    ax = fig.add_subplot()
    grid = [[float("nan") if v is None else v for v in row] for row in values]
    image = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
    ax.set_facecolor("#e6e6e6")  # cells without a score show the background, hatched below
    for r, row in enumerate(values):
        for c, value in enumerate(row):
            if value is None:
                ax.add_patch(_hatched(c, r))
                ax.text(c, r, "no score", ha="center", va="center", fontsize=8, color="#555555")
                continue
            dark = abs(value - CHANCE) > 0.55 * span
            label = f"{value:.2f}" + (f"\n{notes[r][c]}" if notes[r][c] else "")
            ax.text(
                c,
                r,
                label,
                ha="center",
                va="center",
                fontsize=10 if not notes[r][c] else 8.5,
                color="white" if dark else "black",
                fontweight="bold" if marks[r][c] == "best" else "normal",
            )
    ax.set_xticks(range(n_cols), labels=[textwrap.fill(label, 16) for label in column_labels])
    ax.set_yticks(range(n_rows), labels=[textwrap.fill(label, 22) for label in row_labels])
    ax.tick_params(which="both", length=0)
    ax.set_xticks([x - 0.5 for x in range(1, n_cols)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, n_rows)], minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title, loc="left", fontsize=11, fontweight="bold")
    bar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.02)
    bar.set_label("pairwise accuracy (%)", labelpad=6)
    step = 10.0 if span <= 30 else 25.0
    ticks = [CHANCE + k * step for k in range(-int(span // step), int(span // step) + 1)]
    bar.set_ticks(ticks, labels=["50 chance" if t == CHANCE else f"{t:g}" for t in ticks])
    bar.ax.axhline(CHANCE, color="black", linewidth=1.5)
    if threshold is not None and CHANCE < threshold < CHANCE + span:
        bar.ax.axhline(threshold, color="black", linewidth=1, linestyle="--")
    fig.text(
        0.01,
        0.005,
        "\n".join(lines),
        fontsize=CAPTION_POINTS,
        color="#333333",
        ha="left",
        va="bottom",
    )
    return _save(fig, path, drawn)


def _digest(*inputs: Any) -> str:
    try:
        plotted_by = metadata.version("matplotlib")
    except metadata.PackageNotFoundError:
        plotted_by = "unknown"
    blob = json.dumps([DRAWING, plotted_by, *inputs], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _drawn_from(path: Path) -> str | None:
    """The digest a PNG written here keeps; None for a missing or foreign file."""
    try:
        with Image.open(path) as image:
            found = getattr(image, "text", {}).get(DIGEST_KEY)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, str) else None


def heatmap_caption(result: AblationResult, threshold: float | None) -> str:
    """What the colours, the bold, the n under each cell and the dashed line mean, with the
    chance threshold of every pair count shown (each cell is held to its own)."""
    reference = best_covered(shown_cells(result))
    text = (
        "Blue cells are above 50% (white), red ones below; n: the human pairs each cell "
        f"scored. {chance_text(chance_counts(result))}"
    )
    if threshold is not None:
        text += f" Dashed: the 95% threshold on {reference:,} pairs."
    return f"{text} Bold: best in the row. {rule_text(reference)}"


def _hatched(column: int, row: int) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle(
        (column - 0.5, row - 0.5), 1, 1, fill=False, hatch="//", edgecolor="#b0b0b0", linewidth=0
    )


def _save(fig: Any, path: Path, drawn: str) -> Path:
    with atomic_open(path, binary=True) as handle:
        fig.savefig(handle, dpi=150, format="png", metadata={DIGEST_KEY: drawn})
    return path


def write_heatmap(result: AblationResult, path: Path) -> Path | None:
    """table4.png for an ablation result; None (and no file) when no cell has a score."""
    rows, columns = result.shown_rows, result.shown_columns
    if not rows or not columns:
        path.unlink(missing_ok=True)
        return None
    cells = [[row.cells[c.name] for c in columns] for row in rows]
    values = [
        [None if cell.accuracy is None else 100.0 * cell.accuracy for cell in line]
        for line in cells
    ]
    threshold = significance_thresholds(best_covered(shown_cells(result))).acc_95
    if threshold is not None and threshold > 1.0:  # too few pairs for 95%: no line to draw
        threshold = None
    threshold = None if threshold is None else 100.0 * threshold
    shown = HeatmapCells(
        values=values,
        notes=[[cell_note(cell) for cell in line] for line in cells],
        marks=accuracy_marks(result),
        row_labels=[r.label for r in rows],
        column_labels=[c.label for c in columns],
    )
    return plot_accuracy_heatmap(
        shown,
        path,
        title="Pairwise accuracy (%) by VLM backbone and comparer",
        caption=heatmap_caption(result, threshold),
        threshold=threshold,
    )


def cell_note(cell: CellResult) -> str:
    """What a heatmap cell says under its accuracy: 'n=106', or 'n=5\n51 failed'."""
    if not cell.has_value:
        return ""
    failed = f"\n{cell.n_failed:,} failed" if cell.n_failed else ""
    return f"n={cell.count('n_pairs'):,}{failed}"
