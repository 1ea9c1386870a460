"""CLI handler: `titjudge ablation CONFIG [--out DIR]` (the paper's Tables 4, 2 and 3)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from titjudge.ablation.config import AblationConfig, AblationDescriber, load_ablation_config
from titjudge.ablation.grid import run_ablation_async
from titjudge.records import AblationResult


def _console() -> Any:
    from rich.console import Console

    return Console(width=max(100, Console().width), highlight=False)


def print_result(result: AblationResult, console: Any) -> None:
    """Table 4 as an aligned table, then notes, row status and where the files are."""
    from rich.text import Text

    from titjudge.ablation.tables import table4, to_rich

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
    console.print(Text(f"tables, heatmap and ablation.json: {result.out_dir}"))


def ablation(args: argparse.Namespace) -> int:
    overrides = [
        *args.set,
        *([f"bootstrap={args.bootstrap}"] if args.bootstrap is not None else []),
    ]
    config: AblationConfig = load_ablation_config(args.config, overrides)
    from rich.text import Text

    console = _console()

    def announce(index: int, total: int, row: AblationDescriber) -> None:
        console.print(Text(f"row {index + 1}/{total}: {row.heading} ({row.model})", style="bold"))

    result = asyncio.run(
        run_ablation_async(
            config,
            out=args.out,
            limit=args.limit,
            show_progress=sys.stderr.isatty(),
            on_row=announce,
        )
    )
    print_result(result, console)
    return result.exit_code
