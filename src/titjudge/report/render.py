"""Plain-text rendering of a run's typed record (`records.run_record.RunRecord`) as aligned tables
(rich).

Everything is printed as plain text, whatever the console's markup setting: variant names,
model names and the CI legend "[lo, hi]" are data, never rich markup. Columns fold long
cells onto more lines instead of cutting them, so a variant name is always shown whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from titjudge.metrics.catalog import by_name, in_table
from titjudge.metrics.significance import significance_mark
from titjudge.records.percent import percent

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from titjudge.records.metric_values import PositionBias
    from titjudge.records.run_record import (
        Comparison,
        Leaderboard,
        RunRecord,
        Settings,
        Standing,
        Thresholds,
    )

#: header of the significance column: '*' / '**' beat the 95% / 99.9% chance threshold
SIGNIFICANCE_HEADER = "sig."


def _interval(ci: Sequence[float] | None, in_percent: bool) -> str:
    if ci is None:
        return ""
    low, high = ci  # on its own line in the cell, so a narrow column breaks between the two
    if in_percent:
        return f"\n[{percent(low, 2, sign='')}, {percent(high, 2, sign='')}]"
    return f"\n[{low:.3f}, {high:.3f}]"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0.0:
        return "<1e-300"  # below the smallest double: exact p-value underflowed
    return f"{value:.2e}" if value < 1e-3 else f"{value:.3f}"


def _threshold(thresholds: Thresholds, level: str) -> str:
    """'51.37% (6,592 / 12,832, exact p 9.8e-04)' for one level of the chance thresholds."""
    k, n = getattr(thresholds, f"k_{level}"), thresholds.n_pairs
    if k is None:
        return "-"
    if k > n:
        return f"unreachable ({k:,} of {n:,} pairs needed)"
    accuracy, p = getattr(thresholds, f"acc_{level}"), getattr(thresholds, f"p_{level}")
    return f"{percent(accuracy, 2, missing='-')} ({k:,} / {n:,}, exact p {_p(p)})"


def threshold_line(thresholds: Thresholds | None) -> str | None:
    """The chance thresholds as one line: at least k of n correct, with the exact p of k."""
    if thresholds is None or None in (thresholds.k_95, thresholds.mean, thresholds.sd):
        return None
    return (
        f"Chance thresholds for {thresholds.n_pairs:,} pairs (one-sided; normal approx. "
        f"mean {thresholds.mean:,.0f}, sd {thresholds.sd:.2f}; k rounded up): "
        f"95%: {_threshold(thresholds, '95')} (*), 99.9%: {_threshold(thresholds, '999')} (**); "
        "a mark needs at least k correct pairs"
    )


def threshold_lines(record: RunRecord) -> list[str]:
    """One threshold line per pair count the variants were marked against: a variant whose
    failed or fallback items left it fewer pairs is marked against its own k, so that k is
    printed too, naming the variants it applies to."""
    lines = []
    line = threshold_line(record.thresholds)
    if line is not None:
        lines.append(line)
    largest = record.thresholds.n_pairs if record.thresholds is not None else 0
    by_count: dict[int, list[str]] = {}
    for name, variant in record.variants.items():
        own = variant.thresholds
        if variant.n_pairs != largest and own is not None and own.k_95 is not None:
            by_count.setdefault(variant.n_pairs, []).append(name)
    for _, names in sorted(by_count.items(), reverse=True):
        own_line = threshold_line(record.variants[names[0]].thresholds)
        if own_line is not None:
            lines.append(f"{', '.join(names)}: {own_line[0].lower()}{own_line[1:]}")
    return lines


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


def protocol_table(record: RunRecord) -> Table | None:
    """The public set's own number per variant (`metrics.protocols`), where its papers
    publish another than the pairwise accuracy; None otherwise."""
    from titjudge.metrics.protocols import MEASURES

    rows = {n: v.protocol for n, v in record.variants.items() if v.protocol is not None}
    if record.dataset is None or not rows:
        return None
    extra = sorted({key for found in rows.values() for key in found.values})
    table = plain_table(
        f"The set's own number: {MEASURES.get(record.dataset.measure, record.dataset.measure)}",
        ("variant", "value", "over", "left out", *extra, "fallback"),
    )
    for name, found in rows.items():
        add_plain_row(
            table,
            name,
            _number(found.value),
            f"{found.n:,} {found.unit}",
            f"{found.skipped:,}",
            *(_number(found.values.get(key)) for key in extra),
            fallback_cell(record, name, record.variants[name].n_fallback),
        )
    return table


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def fallback_cell(record: RunRecord, name: str, n_fallback: int) -> str:
    """A variant's fallback scores with their share of its scores: `48 (100%)`; the count
    alone where the share is not recorded (a run from an older titjudge)."""
    origin = record.origin(name)
    if not n_fallback or origin is None or origin.fallback_share is None:
        return f"{n_fallback:,}"
    return f"{n_fallback:,} ({origin.percent()})"


def origin_lines(record: RunRecord, names: Sequence[str] | None = None) -> list[str]:
    """A line per variant (of `names`, default every one the record knows) whose scores came
    partly or wholly from its fallback or whose model was stopped (`VariantOrigin.note`); for a
    variant that fell back in a run whose summary does not record where its scores came from,
    a line saying that."""
    summary = record.summary
    if names is None:
        origins = summary.origins if summary is not None else None
        names = list(record.variants) or list(origins or {})
    lines = []
    for name in names:
        origin = record.origin(name)
        if origin is not None:
            note = origin.note(name)
            if note is not None:
                lines.append(note)
            continue
        variant = record.variants.get(name)
        if variant is not None and variant.n_fallback:
            lines.append(
                f"{name}: {variant.n_fallback:,} of its scores came from its fallback; this run's "
                "summary does not record their share or whether its model was stopped "
                "(written by an older titjudge)"
            )
    return lines


def print_summary(record: RunRecord, console: Console) -> None:
    """Variant tables (pairs; rankings), chance thresholds, leaderboard and pairwise
    comparisons of `record`, as plain text on any console (cells such as "[0.88, 0.91]" are
    data, not markup)."""
    settings = record.settings
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
    for name, row in record.variants.items():
        add_plain_row(
            pairwise,
            name,
            accuracy.shown(row.pairwise_accuracy)
            + _interval(row.ci.get(accuracy.name), accuracy.percent),
            significance_mark(row.n_correct, row.thresholds),
            ties.shown(row.metric_tie_rate),
            f"{row.n_pairs:,}",
            f"{row.n_pairs_skipped:,}",
            _p(row.p_value),
            f"{row.n_failed:,}",
            fallback_cell(record, name, row.n_fallback),
        )
        add_plain_row(
            ranking,
            name,
            *(
                m.shown(row.get(m.name)) + _interval(row.ci.get(m.name), m.percent)
                for m in rankings
            ),
        )
    console.print(pairwise)
    if record.dataset is not None:  # which set, and whether the published numbers compare
        say(console, record.dataset.line())
        protocol = protocol_table(record)
        if protocol is not None:
            console.print(protocol)
    for line in origin_lines(record):  # beside the numbers: whose scores they are
        say(console, line)
    console.print(ranking)
    for line in threshold_lines(record):
        say(console, line)
    if settings.bootstrap:
        say(
            console,
            f"[brackets]: {100 * settings.confidence:g}% bootstrap CI over prompts "
            f"({settings.bootstrap:,} resamples, seed {settings.seed})",
        )
    skipped = [  # a variant of fallback scores alone: its line above says why
        f"{n}: {v.n_prompts_skipped}"
        for n, v in record.variants.items()
        if v.n_prompts_skipped and not (v.n_scored and v.n_fallback == v.n_scored)
    ]
    if skipped:
        say(
            console,
            "Prompts skipped by SRCC/KRCC (too few images or constant scores/ranks): "
            + ", ".join(skipped),
        )
    for name, variant in record.variants.items():
        if variant.accuracy_source == "verdicts":
            say(console, _verdicts_line(name, variant.pairwise))
    if record.leaderboard is not None:
        _print_leaderboard(record.leaderboard, console)
    if record.comparisons:
        _print_comparisons(record.comparisons, console)
    for note in record.notes:
        say(console, f"note: {note}")


def _heading(label: str, name: str, settings: Settings) -> str:
    """A ranking column's heading; nDCG's names the gain it was computed with."""
    return f"{label} ({settings.gain})" if name == "ndcg" else label


def _verdicts_line(name: str, bias: PositionBias | None) -> str:
    """A pairwise judge: accuracy from its verdicts, and how often the first position won."""
    line = f"{name}: pairwise accuracy from its verdicts (both orders; a disagreement is a tie)"
    if bias is not None and bias.n_decisive and bias.position_bias_rate is not None:
        line += (
            f"; the first-shown image won {bias.n_first_wins:,} of {bias.n_decisive:,} "
            f"decisive single-order verdicts (position bias {bias.position_bias_rate:+.2f}, "
            f"p {_p(bias.position_bias_p_value)})"
        )
    if bias is not None and bias.order_agreement_rate is not None:
        line += f"; the orders agreed on {percent(bias.order_agreement_rate, missing='-')} of pairs"
    return line


def _print_leaderboard(board: Leaderboard, console: Console) -> None:
    table = plain_table(
        "T2I model leaderboard: average rank over prompts (model rank)",
        ("model", "human", *board.variants),
    )

    def cell(standing: Standing | None) -> str:
        if standing is None or standing.average_rank is None:
            return "-"
        return f"{standing.average_rank:.2f} ({standing.rank:g})"

    for model in board.models:
        add_plain_row(
            table,
            model,
            cell(board.human.get(model)),
            *(cell(v.models.get(model)) for v in board.variants.values()),
        )
    table.add_section()
    metric = by_name("leaderboard_srcc")
    add_plain_row(table, metric.label, "", *(metric.shown(v.srcc) for v in board.variants.values()))
    console.print(table)


def _print_comparisons(comparisons: list[Comparison], console: Console) -> None:
    table = plain_table(
        "Paired comparisons (exact McNemar; accuracies on the pairs both variants were counted on)",
        ("A", "B", "shared pairs", "acc A", "acc B", "only A right", "only B right", "p-value"),
        left=2,
    )
    for c in comparisons:
        add_plain_row(
            table,
            c.variant_a,
            c.variant_b,
            f"{c.n_pairs:,}",
            percent(c.accuracy_a, 2, missing="-"),
            percent(c.accuracy_b, 2, missing="-"),
            f"{c.a_only:,}",
            f"{c.b_only:,}",
            _p(c.p_value),
        )
    console.print(table)
