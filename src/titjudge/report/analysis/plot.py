"""The length breakdown as a PNG: pairwise accuracy per prompt-length bucket, one line per
variant with its CI as error bars and each bucket's pair count under its label; chance (50%)
dashed. Drawn like table4.png (`ablation.heatmap`): matplotlib's Agg canvas on a bare
`Figure`, no pyplot state, so it works headless and in threads."""

from __future__ import annotations

import io
from pathlib import Path

from titjudge.files import atomic_open
from titjudge.report.analysis.breakdown import Breakdown


def length_plot_png(found: Breakdown, title: str) -> bytes:
    """The PNG bytes of `found` (a `length` breakdown)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    groups = list(dict.fromkeys(row.group for row in found.rows))
    variants = list(dict.fromkeys(row.variant for row in found.rows))
    pair_counts = {row.group: row.n_human_pairs for row in found.rows}
    figure = Figure(figsize=(max(5.0, 1.4 * len(groups) + 2), 3.6), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = range(len(groups))
    for offset, variant in enumerate(variants):
        by_group = {row.group: row for row in found.rows if row.variant == variant}
        xs, ys, low, high = [], [], [], []
        for x, group in zip(positions, groups, strict=True):
            row = by_group.get(group)
            if row is None or row.pairwise_accuracy is None:
                continue
            shift = (offset - (len(variants) - 1) / 2) * 0.06
            value = 100 * row.pairwise_accuracy
            xs.append(x + shift)
            ys.append(value)
            low.append(value - 100 * row.ci[0] if row.ci else 0.0)
            high.append(100 * row.ci[1] - value if row.ci else 0.0)
        axes.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=variant)
    axes.axhline(50.0, color="grey", linestyle="--", linewidth=0.8)
    axes.set_xlim(-0.5, len(groups) - 0.5)
    axes.set_xticks(list(positions))
    axes.set_xticklabels([f"{g}\n(n={pair_counts[g]})" for g in groups], fontsize=8)
    axes.set_ylabel("pairwise accuracy (%)")
    axes.set_ylim(0, 100)
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=8, loc="lower left")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def write_length_plot(found: Breakdown, path: Path, title: str) -> Path:
    """Write the PNG (atomically) and return its path."""
    data = length_plot_png(found, title)
    with atomic_open(path, binary=True) as handle:
        handle.write(data)
    return path
