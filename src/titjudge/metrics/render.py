"""Plain-text rendering of an `evaluate` summary as aligned tables (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from titjudge.metrics.significance import significance_mark
from titjudge.metrics.summary import RESERVED_KEYS

if TYPE_CHECKING:
    from rich.console import Console


def _pct(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _interval(ci: Sequence[float] | None, percent: bool) -> str:
    if ci is None:
        return ""
    low, high = ci
    return f" [{100 * low:.2f}, {100 * high:.2f}]" if percent else f" [{low:.3f}, {high:.3f}]"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0.0:
        return "<1e-300"  # below the smallest double: exact p-value underflowed
    return f"{value:.2e}" if value < 1e-3 else f"{value:.3f}"


def _stars(row: dict[str, Any]) -> str:
    """'**' at or above the 99.9% chance threshold, '*' the 95% one (whole correct pairs)."""
    return significance_mark(row["n_correct"], row["thresholds"])


def _threshold(thresholds: dict[str, Any], level: str) -> str:
    """'51.37% (6,592 / 12,832, exact p 9.8e-04)' for one level of the chance thresholds."""
    k, n = thresholds[f"k_{level}"], thresholds["n_pairs"]
    if k > n:
        return f"unreachable ({k:,} of {n:,} pairs needed)"
    return f"{_pct(thresholds[f'acc_{level}'])} ({k:,} / {n:,}, exact p {_p(thresholds[f'p_{level}'])})"


def threshold_line(thresholds: dict[str, Any]) -> str | None:
    """The chance thresholds as one line: at least k of n correct, with the exact p of k."""
    if thresholds["k_95"] is None:
        return None
    return (
        f"Chance thresholds for {thresholds['n_pairs']:,} pairs (one-sided; normal approx. "
        f"mean {thresholds['mean']:,.0f}, sd {thresholds['sd']:.2f}; k rounded up): "
        f"95%: {_threshold(thresholds, '95')} (*), 99.9%: {_threshold(thresholds, '999')} (**); "
        "a mark needs at least k correct pairs"
    )


def variant_names(summary: dict[str, Any]) -> list[str]:
    return [name for name in summary if name not in RESERVED_KEYS]


def print_summary(summary: dict[str, Any], console: Console) -> None:
    """Variant table, chance thresholds, leaderboard and pairwise comparisons.

    Pass a `Console(markup=False)`: cells such as "[0.88, 0.91]" are data, not markup.
    """
    from rich.table import Table

    names = variant_names(summary)
    settings = summary["settings"]
    table = Table(title="Agreement with human judgments", title_justify="left")
    for header in ("variant", "pairwise acc", "", "metric ties", "pairs", "skipped"):
        table.add_column(header, justify="left" if header == "variant" else "right")
    for header in ("p-value", "SRCC", "KRCC", f"nDCG ({settings['gain']})", "failed", "fallback"):
        table.add_column(header, justify="right")
    for name in names:
        row = summary[name]
        ci = row["ci"]
        table.add_row(
            name,
            _pct(row["pairwise_accuracy"]) + _interval(ci["pairwise_accuracy"], True),
            _stars(row),
            _pct(row["metric_tie_rate"], 1),
            f"{row['n_pairs']:,}",
            f"{row['n_pairs_skipped']:,}",
            _p(row["p_value"]),
            _num(row["srcc"]) + _interval(ci["srcc"], False),
            _num(row["krcc"]) + _interval(ci["krcc"], False),
            _num(row["ndcg"]) + _interval(ci["ndcg"], False),
            f"{row['n_failed']:,}",
            f"{row['n_fallback']:,}",
        )
    console.print(table)
    line = threshold_line(summary["thresholds"])
    if line is not None:
        console.print(line)
    if settings["bootstrap"]:
        console.print(
            f"[brackets]: {100 * settings['confidence']:g}% bootstrap CI over prompts "
            f"({settings['bootstrap']:,} resamples, seed {settings['seed']})"
        )
    skipped = [
        f"{n}: {summary[n]['n_prompts_skipped']}" for n in names if summary[n]["n_prompts_skipped"]
    ]
    if skipped:
        console.print(
            "Prompts skipped by SRCC/KRCC (too few images or constant scores/ranks): "
            + ", ".join(skipped)
        )
    if summary["leaderboard"] is not None:
        _print_leaderboard(summary["leaderboard"], console)
    if summary["comparisons"]:
        _print_comparisons(summary["comparisons"], console)
    for note in summary["notes"]:
        console.print(f"note: {note}")


def _print_leaderboard(board: dict[str, Any], console: Console) -> None:
    from rich.table import Table

    table = Table(
        title="T2I model leaderboard: average rank over prompts (model rank)", title_justify="left"
    )
    table.add_column("model")
    table.add_column("human", justify="right")
    for name in board["variants"]:
        table.add_column(name, justify="right")

    def cell(standing: dict[str, Any]) -> str:
        if standing["average_rank"] is None:
            return "-"
        return f"{standing['average_rank']:.2f} ({standing['rank']:g})"

    for model in board["models"]:
        table.add_row(
            model,
            cell(board["human"][model]),
            *(cell(v["models"][model]) for v in board["variants"].values()),
        )
    table.add_section()
    table.add_row("SRCC vs human", "", *(_num(v["srcc"]) for v in board["variants"].values()))
    console.print(table)


def _print_comparisons(comparisons: list[dict[str, Any]], console: Console) -> None:
    from rich.table import Table

    table = Table(title="Paired comparisons (exact McNemar, shared pairs)", title_justify="left")
    for header in ("A", "B"):
        table.add_column(header)
    for header in ("pairs", "acc A", "acc B", "only A right", "only B right", "p-value"):
        table.add_column(header, justify="right")
    for c in comparisons:
        table.add_row(
            c["variant_a"],
            c["variant_b"],
            f"{c['n_pairs']:,}",
            _pct(c["accuracy_a"]),
            _pct(c["accuracy_b"]),
            f"{c['a_only']:,}",
            f"{c['b_only']:,}",
            _p(c["p_value"]),
        )
    console.print(table)
