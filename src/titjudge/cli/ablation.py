"""`titjudge ablation CONFIG [--out DIR]`: the paper's Table 4 grid plus Tables 2 and 3."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from titjudge.cli.common import arg, command, config_args, out_arg, preflight, wide_console

if TYPE_CHECKING:
    from rich.console import Console

    from titjudge.ablation.config import AblationDescriber
    from titjudge.records import AblationResult


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `ablation`."""
    command(
        subparsers,
        "ablation",
        ablation,
        "the paper's Table 4 grid (VLM rows x comparer columns) plus Tables 2 and 3, in one run",
        *config_args(
            "ablation config (YAML): describers (rows) and comparers (columns)",
            "e.g. describers.gpt-4o.enabled=false",
        ),
        out_arg("output folder"),
        arg("--bootstrap", type=int, help="bootstrap resamples for CIs (default: the config's)"),
    )


def print_result(result: AblationResult, console: Console) -> None:
    """Table 4 as an aligned table, then notes, row status and where the files are."""
    from rich.text import Text

    from titjudge.ablation.tables import table4
    from titjudge.ablation.writers import to_rich
    from titjudge.cli.run import print_budget, print_failures
    from titjudge.records.summary import BudgetSummary

    table = table4(result)
    if table.rows:
        console.print(to_rich(table))
        console.print(Text(table.legend, style="dim"))
    for note in result.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    for row in result.rows:
        status = (
            f"failed: {row.error}"
            if row.error
            else f"{row.n_items} items, {row.n_failed_items} with failed variants"
        )
        console.print(
            Text(f"{row.label}: {status} -> {row.run_dir}", style="red" if row.error else "")
        )
        if row.error is None:
            print_failures(row.run_dir, console)
    console.print(Text(f"tables, heatmap and ablation.json: {result.out_dir}"))
    # ablation.json's `budget`: the grid's ledger, read as the runs' budget is
    budget = result.budget
    print_budget(BudgetSummary.model_validate(budget) if budget is not None else None, console)


def ablation(args: argparse.Namespace) -> int:
    """Run every describer row and comparer column of the config, then print Table 4; the
    preflight runs first, so a grid missing a key or a checkpoint stops before its first row."""
    from rich.text import Text

    from titjudge.ablation.config import load_ablation_config
    from titjudge.run.loop import run_to_end

    overrides = [
        *args.set,
        *([f"bootstrap={args.bootstrap}"] if args.bootstrap is not None else []),
    ]
    config = load_ablation_config(args.config, overrides)
    preflight(config, str(args.config))
    from titjudge.ablation.grid import run_ablation_async  # after the preflight, as `run`

    console = wide_console(highlight=False)

    def announce(index: int, total: int, row: AblationDescriber) -> None:
        console.print(Text(f"row {index + 1}/{total}: {row.heading} ({row.model})", style="bold"))

    result = run_to_end(
        run_ablation_async(
            config,
            out=args.out,
            limit=args.limit,
            show_progress=True,
            on_row=announce,
        )
    )
    print_result(result, console)
    return result.exit_code
