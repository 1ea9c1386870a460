"""Plain-text rendering of an `evaluate` summary as aligned tables (rich).

Everything is printed as plain text, whatever the console's markup setting: variant names,
model names and the CI legend "[lo, hi]" are data, never rich markup. Columns fold long
cells onto more lines instead of cutting them, so a variant name is always shown whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from titjudge.metrics.catalog import by_name, in_table
from titjudge.metrics.significance import significance_mark

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

#: header of the significance column: '*' / '**' beat the 95% / 99.9% chance threshold
SIGNIFICANCE_HEADER = "sig."


def _pct(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def _interval(ci: Sequence[float] | None, percent: bool) -> str:
    if ci is None:
        return ""
    low, high = ci  # on its own line in the cell, so a narrow column breaks between the two
    return f"\n[{100 * low:.2f}, {100 * high:.2f}]" if percent else f"\n[{low:.3f}, {high:.3f}]"


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


def threshold_lines(summary: dict[str, Any]) -> list[str]:
    """One threshold line per pair count the variants were marked against: a variant whose
    failed or fallback items left it fewer pairs is marked against its own k, so that k is
    printed too, naming the variants it applies to."""
    lines = []
    line = threshold_line(summary["thresholds"])
    if line is not None:
        lines.append(line)
    largest = summary["thresholds"]["n_pairs"]
    by_count: dict[int, list[str]] = {}
    for name in variant_names(summary):
        n = summary["variants"][name]["n_pairs"]
        if n != largest and summary["variants"][name]["thresholds"]["k_95"] is not None:
            by_count.setdefault(n, []).append(name)
    for _, names in sorted(by_count.items(), reverse=True):
        own = threshold_line(summary["variants"][names[0]]["thresholds"])
        if own is not None:
            lines.append(f"{', '.join(names)}: {own[0].lower()}{own[1:]}")
    return lines


def variant_names(summary: dict[str, Any]) -> list[str]:
    return list(summary["variants"])


def plain_table(title: str, headers: Sequence[str], left: int = 1) -> Table:
    """A rich table whose title, headers and cells are plain text and whose columns fold
    (wrap inside a cell) rather than truncate; the first `left` columns are left-aligned."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left")
    for index, header in enumerate(headers):
        table.add_column(Text(header), justify="left" if index < left else "right", overflow="fold")
    return table


def add_plain_row(table: Table, *cells: str) -> None:
    """Add a row whose cells are plain text (brackets in a name stay brackets)."""
    from rich.text import Text

    table.add_row(*(Text(cell) for cell in cells))


def say(console: Console, line: str) -> None:
    """Print one line as plain text: no markup, no highlighting."""
    console.print(line, markup=False, highlight=False)


def print_summary(summary: dict[str, Any], console: Console) -> None:
    """Variant tables (pairs; rankings), chance thresholds, leaderboard and pairwise comparisons, as plain text
    on any console (cells such as "[0.88, 0.91]" are data, not markup)."""
    names = variant_names(summary)
    settings = summary["settings"]
    accuracy, ties = by_name("pairwise_accuracy"), by_name("metric_tie_rate")
    pairwise = plain_table(
        "Agreement with human judgments: pairs",
        (
            "variant",
            accuracy.label,
            SIGNIFICANCE_HEADER,
            ties.label,
            "pairs",
            "skipped",
            "p-value",
            "failed",
            "fallback",
        ),
    )
    rankings = in_table("rankings")
    ranking = plain_table(
        "Agreement with human judgments: rankings per prompt (mean over prompts)",
        ("variant", *(_heading(m.label, m.name, settings) for m in rankings)),
    )
    for name in names:
        row = summary["variants"][name]
        ci = row["ci"]
        add_plain_row(
            pairwise,
            name,
            accuracy.shown(row[accuracy.name]) + _interval(ci[accuracy.name], accuracy.percent),
            _stars(row),
            ties.shown(row[ties.name]),
            f"{row['n_pairs']:,}",
            f"{row['n_pairs_skipped']:,}",
            _p(row["p_value"]),
            f"{row['n_failed']:,}",
            f"{row['n_fallback']:,}",
        )
        add_plain_row(
            ranking,
            name,
            *(m.shown(row[m.name]) + _interval(ci[m.name], m.percent) for m in rankings),
        )
    console.print(pairwise)
    console.print(ranking)
    for line in threshold_lines(summary):
        say(console, line)
    if settings["bootstrap"]:
        say(
            console,
            f"[brackets]: {100 * settings['confidence']:g}% bootstrap CI over prompts "
            f"({settings['bootstrap']:,} resamples, seed {settings['seed']})",
        )
    variants = summary["variants"]
    skipped = [
        f"{n}: {variants[n]['n_prompts_skipped']}"
        for n in names
        if variants[n]["n_prompts_skipped"]
    ]
    if skipped:
        say(
            console,
            "Prompts skipped by SRCC/KRCC (too few images or constant scores/ranks): "
            + ", ".join(skipped),
        )
    for name in names:
        if variants[name].get("accuracy_source") == "verdicts":
            say(console, _verdicts_line(name, variants[name].get("pairwise") or {}))
    if summary["leaderboard"] is not None:
        _print_leaderboard(summary["leaderboard"], console)
    if summary["comparisons"]:
        _print_comparisons(summary["comparisons"], console)
    for note in summary["notes"]:
        say(console, f"note: {note}")


def _heading(label: str, name: str, settings: dict[str, Any]) -> str:
    """A ranking column's heading; nDCG's names the gain it was computed with."""
    return f"{label} ({settings['gain']})" if name == "ndcg" else label


def _verdicts_line(name: str, bias: dict[str, Any]) -> str:
    """A pairwise judge: accuracy from its verdicts, and how often the first position won."""
    line = f"{name}: pairwise accuracy from its verdicts (both orders; a disagreement is a tie)"
    if bias.get("n_decisive"):
        line += (
            f"; the first-shown image won {bias['n_first_wins']:,} of {bias['n_decisive']:,} "
            f"decisive single-order verdicts (position bias {bias['position_bias_rate']:+.2f}, "
            f"p {_p(bias['position_bias_p_value'])})"
        )
    if bias.get("order_agreement_rate") is not None:
        line += f"; the orders agreed on {_pct(bias['order_agreement_rate'], 1)} of pairs"
    return line


def _print_leaderboard(board: dict[str, Any], console: Console) -> None:
    table = plain_table(
        "T2I model leaderboard: average rank over prompts (model rank)",
        ("model", "human", *board["variants"]),
    )

    def cell(standing: dict[str, Any]) -> str:
        if standing["average_rank"] is None:
            return "-"
        return f"{standing['average_rank']:.2f} ({standing['rank']:g})"

    for model in board["models"]:
        add_plain_row(
            table,
            model,
            cell(board["human"][model]),
            *(cell(v["models"][model]) for v in board["variants"].values()),
        )
    table.add_section()
    metric = by_name("leaderboard_srcc")
    add_plain_row(
        table, metric.label, "", *(metric.shown(v["srcc"]) for v in board["variants"].values())
    )
    console.print(table)


def _print_comparisons(comparisons: list[dict[str, Any]], console: Console) -> None:
    table = plain_table(
        "Paired comparisons (exact McNemar; accuracies on the pairs both variants were counted on)",
        ("A", "B", "shared pairs", "acc A", "acc B", "only A right", "only B right", "p-value"),
        left=2,
    )
    for c in comparisons:
        add_plain_row(
            table,
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
