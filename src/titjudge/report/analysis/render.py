"""Breakdowns and comparisons as rich tables (the terminal's view of `breakdown` and
`compare`; `--json` prints their dicts instead)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from titjudge.records.origins import VariantOrigin
from titjudge.records.percent import percent
from titjudge.report.analysis.breakdown import Breakdown
from titjudge.report.analysis.compare import RunComparison, compared_metrics
from titjudge.report.render import add_plain_row, plain_table, say

#: the metric whose bootstrap interval a comparison shows
ACCURACY = "pairwise_accuracy"

_TITLES = {
    "length": "by prompt length (words)",
    "model": "by T2I model (pairs with the model on either side; SRCC has no per-model value)",
    "element": "by checklist element type (each type scored alone)",
}


def _ci(ci: Any) -> str:
    return "—" if not ci else f"[{percent(ci[0], sign='')}, {percent(ci[1], sign='')}]"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def print_breakdown(found: Breakdown, console: Console) -> None:
    table = plain_table(
        f"Pairwise accuracy {_TITLES[found.dimension]}",
        (
            "group",
            "variant",
            "human pairs",
            "pairs",
            "accuracy",
            "95% CI",
            "SRCC",
            "prompts",
            "fallback",
            "stopped",
        ),
        2,
    )
    for row in found.rows:
        share = row.fallback_share
        add_plain_row(
            table,
            row.group,
            row.variant,
            str(row.n_human_pairs),
            str(row.n_pairs),
            percent(row.pairwise_accuracy),
            _ci(row.ci),
            _num(row.srcc),
            str(row.n_prompts),
            f"{row.n_fallback} ({percent(share, 0)})" if row.n_fallback and share else "0",
            "?" if row.model_stopped is None else "yes" if row.model_stopped else "no",
        )
    console.print(table)


def _origin_cells(row: dict[str, Any]) -> tuple[str, str]:
    """A compared variant's share of scores from its fallback (`48 (100%)`) and whether its
    model was stopped; `?` where its run did not record them."""
    if row["origin"] is None:
        return "?", "?"
    origin = VariantOrigin.model_validate(row["origin"])
    fallback = f"{origin.n_fallback} ({origin.percent()})" if origin.n_fallback else "0"
    stopped = origin.stopped
    return fallback, "?" if stopped is None else "yes" if stopped else "no"


def print_comparison(found: RunComparison, console: Console) -> None:
    runs = plain_table("Runs", ("run", "name", "human pairs", "run dir"), 2)
    for run in found.runs:
        add_plain_row(runs, run["label"], str(run["name"]), str(run["n_pairs"]), run["run_dir"])
    console.print(runs)
    say(
        console,
        f"compared on {found.n_shared_pairs} shared human pairs ({found.n_shared_non_tie} non-tie)",
    )
    for note in found.notes:
        say(console, f"note: {note}")
    # the metrics' columns as the catalog declares them, accuracy's interval beside it
    shown = compared_metrics()
    headings = [h for m in shown for h in (m.label, "95% CI")[: 2 if m.name == ACCURACY else 1]]
    side = plain_table(
        "Variants on the shared pairs", ("variant", "pairs", *headings, "fallback", "stopped")
    )
    for row in found.variants:
        cells = [
            cell
            for m in shown
            for cell in (m.shown(row.get(m.name)), _ci(row["ci"]))[: 2 if m.name == ACCURACY else 1]
        ]
        add_plain_row(side, row["column"], str(row["n_pairs"]), *cells, *_origin_cells(row))
    console.print(side)
    for row in found.variants:  # whose scores they are, beside them
        if row["origin_note"]:
            say(console, row["origin_note"])
    tests = plain_table(
        "Paired comparisons on the pairs both counted: exact McNemar, Cohen's kappa of the verdicts",
        ("A", "B", "pairs", "acc A", "acc B", "only A right", "only B right", "p-value", "kappa"),
        2,
    )
    for test, agreed in zip(found.mcnemar, found.agreement, strict=True):
        add_plain_row(
            tests,
            test.variant_a,
            test.variant_b,
            str(test.n_pairs),
            percent(test.accuracy_a),
            percent(test.accuracy_b),
            str(test.a_only),
            str(test.b_only),
            "—" if test.p_value is None else f"{test.p_value:.3g}",
            _num(agreed["kappa"]),
        )
    console.print(tests)
    if found.config_changes:
        say(console, "Config changes (against the first run):")
        for change in found.config_changes:
            say(
                console,
                f"  {change['run']}: {change['key']}: {change['from']!r} -> {change['to']!r}",
            )
    elif len(found.runs) > 1:
        say(console, "Config changes: none in models, prompts, thinking or sampling")
