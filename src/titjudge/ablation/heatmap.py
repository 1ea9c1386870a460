"""Table 4 as a heatmap: rows VLMs, columns comparers, one annotated cell each.

The colour scale diverges at 50% (chance): blue cells beat chance, red ones fall below,
white sits at chance, so the paper's finding (LMM Score far below 50% for most VLMs)
reads at a glance. matplotlib is imported here only, and drawn with its Agg canvas on a
bare `Figure` (no pyplot global state), so it works headless and in threads.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from titjudge.ablation.tables import mark_best
from titjudge.files import atomic_open

if TYPE_CHECKING:
    from titjudge.records import AblationResult

CHANCE = 50.0
#: the PNG text key holding the digest of what the heatmap was drawn from
DIGEST_KEY = "titjudge-drawn-from"
#: bump when the drawing code changes, so a heatmap drawn the old way is drawn again
DRAWING = 1
#: smallest half-width of the colour scale around chance, in accuracy points
MIN_SPAN = 10.0


def colour_span(values: Sequence[float | None]) -> float:
    """Half-width of a scale centred on chance that holds every value, rounded up to 5 points."""
    spread = max((abs(v - CHANCE) for v in values if v is not None), default=0.0)
    return max(MIN_SPAN, 5.0 * -(-spread // 5.0))


def plot_accuracy_heatmap(
    values: Sequence[Sequence[float | None]],
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    notes: Sequence[Sequence[str]],
    path: Path,
    *,
    title: str,
    threshold: float | None = None,
    n_pairs: int | None = None,
) -> Path:
    """Draw accuracies in percent (None = no score) with `notes` under each number; write a PNG.

    The PNG keeps a digest of what it was drawn from (and matplotlib's version); when `path`
    already holds one drawn from the same, it is left as it is and matplotlib is not even
    imported (a cached re-run of a grid draws nothing new)."""
    drawn = _digest(values, row_labels, column_labels, notes, title, threshold, n_pairs)
    if _drawn_from(path) == drawn:
        return path
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    n_rows, n_cols = len(row_labels), len(column_labels)
    flat = [v for row in values for v in row]
    span = colour_span(flat)
    norm = Normalize(CHANCE - span, CHANCE + span)
    fig = Figure(figsize=(2.4 + 1.45 * n_cols, 1.9 + 0.62 * n_rows))
    fig.set_layout_engine("constrained", rect=(0, 0.05, 1, 0.95))  # room for the caption
    ax = fig.add_subplot()
    grid = [[float("nan") if v is None else v for v in row] for row in values]
    image = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
    ax.set_facecolor("#e6e6e6")  # cells without a score show the background, hatched below
    for r, row in enumerate(values):
        marks = mark_best(row, 2)
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
                fontweight="bold" if marks[c] == "best" else "normal",
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
        _caption(threshold, n_pairs),
        fontsize=8,
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


def _caption(threshold: float | None, n_pairs: int | None) -> str:
    text = "Blue beats chance (50%, white), red falls below it. Bold: best in the row."
    if threshold is not None and n_pairs:
        text += f" At least {threshold:.2f}% (dashed) beats chance at 95% on {n_pairs:,} pairs."
    return text


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
    notes = [
        [f"({cell.n_failed} failed)" if cell.n_failed and cell.has_value else "" for cell in line]
        for line in cells
    ]
    thresholds = result.thresholds or {}
    threshold = thresholds.get("acc_95")
    if threshold is not None and threshold > 1.0:  # too few pairs for 95%: no line to draw
        threshold = None
    return plot_accuracy_heatmap(
        values,
        [r.label for r in rows],
        [c.label for c in columns],
        notes,
        path,
        title="Pairwise accuracy (%) by VLM backbone and comparer",
        threshold=None if threshold is None else 100.0 * threshold,
        n_pairs=thresholds.get("n_pairs"),
    )
