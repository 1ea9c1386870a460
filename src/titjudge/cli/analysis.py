"""`titjudge compare RUN [RUN ...]`: variants of several runs side by side on their shared
pairs (McNemar, kappa, config changes) and, with `--breakdown`, by prompt length, T2I model
or checklist element type; `titjudge export RUN`: the run's frames as parquet or CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from titjudge.cli.common import arg, command, json_arg, wide_console

if TYPE_CHECKING:
    from rich.console import Console

    from titjudge.report.analysis.breakdown import Breakdown, Dimension
    from titjudge.report.analysis.run import RunData


def add_breakdown(parser: argparse.ArgumentParser) -> None:
    """`--breakdown`, `--length-edges` and `--plot`, shared by `compare` and `run`."""
    parser.add_argument(
        "--breakdown",
        metavar="BY",
        help="also break pairwise accuracy and SRCC down by: length (prompt words), model "
        "(T2I model), element (checklist element type); comma-separated, e.g. length,model",
    )
    parser.add_argument(
        "--length-edges",
        metavar="N,N,...",
        help="prompt-length bucket edges in words, e.g. 100,200,300 (default: the quartiles)",
    )
    parser.add_argument(
        "--plot", type=Path, metavar="PNG", help="draw the length breakdown as a PNG here"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `compare` and `export`."""
    p = command(
        subparsers,
        "compare",
        compare,
        "compare runs' variants on their shared human pairs: accuracy with its CI and every "
        "tabled metric, exact McNemar, Cohen's kappa, config changes",
        arg(
            "runs",
            nargs="+",
            type=Path,
            metavar="RUN",
            help="run dirs, or <run.out>/<name> folders (their latest run); one run compares "
            "its own variants",
        ),
        arg(
            "--variants",
            metavar="V,V,...",
            help="only these variants (names, or r1:name labels), comma-separated",
        ),
        json_arg("the comparison"),
    )
    add_breakdown(p)
    command(
        subparsers,
        "export",
        export,
        "write a run's items, pairs and metrics frames as parquet or CSV files",
        arg("run", type=Path, metavar="RUN", help="run dir or <run.out>/<name> folder"),
        arg("--format", choices=("parquet", "csv"), default="parquet"),
        arg(
            "--out", type=Path, metavar="DIR", help="folder for the files (default: RUN's frames/)"
        ),
    )


def check_breakdown_args(args: argparse.Namespace) -> list[Dimension]:
    """The asked dimensions ([] for none); a bad `--breakdown`, `--length-edges` or `--plot`
    is one DataError, raised before any work."""
    from titjudge.errors import DataError
    from titjudge.report.analysis.breakdown import parse_dimensions, parse_edges

    if args.breakdown is None:
        if args.plot is not None or args.length_edges is not None:
            raise DataError("--plot and --length-edges need --breakdown length")
        return []
    dimensions = parse_dimensions(args.breakdown)
    if args.plot is not None and "length" not in dimensions:
        raise DataError("--plot draws the length breakdown: add length to --breakdown")
    if args.length_edges:
        parse_edges(args.length_edges)
    return dimensions


def breakdowns(runs: list[RunData], labels: list[str], args: argparse.Namespace) -> list[Breakdown]:
    """Each asked breakdown of every run (variants labelled by run when there are several);
    the length buckets of the first run (its quartiles) serve them all."""
    import dataclasses

    from titjudge.errors import DataError
    from titjudge.report.analysis.breakdown import (
        Breakdown,
        breakdown,
        checklist_variants,
        parse_edges,
    )

    dimensions = check_breakdown_args(args)
    edges = parse_edges(args.length_edges) if args.length_edges else None
    found = []
    for dimension in dimensions:
        rows, cuts = [], edges
        for run, label in zip(runs, labels, strict=True):
            if dimension == "element" and len(runs) > 1 and not checklist_variants(run):
                continue
            part = breakdown(run, dimension, cuts)
            cuts = part.edges if dimension == "length" else cuts
            for row in part.rows:
                name = row.variant if len(runs) == 1 else f"{label}:{row.variant}"
                rows.append(dataclasses.replace(row, variant=name))
        if dimension == "element" and not rows:
            raise DataError("no checklist judge in these runs, so no element types to break down")
        found.append(Breakdown(dimension, rows, cuts if dimension == "length" else None))
    if args.plot is not None:
        from titjudge.report.analysis.plot import write_length_plot

        length = next(b for b in found if b.dimension == "length")
        write_length_plot(length, args.plot, "Pairwise accuracy by prompt length")
    return found


def print_breakdowns(found: list[Breakdown], console: Console, plot: Path | None) -> None:
    from titjudge.report.analysis.render import print_breakdown
    from titjudge.report.render import say

    for entry in found:
        print_breakdown(entry, console)
    if plot is not None:
        say(console, f"length plot: {plot}")


def compare(args: argparse.Namespace) -> int:
    from titjudge.files import to_json
    from titjudge.report.analysis.compare import compare_runs
    from titjudge.report.analysis.run import RunData

    check_breakdown_args(args)
    runs = [RunData.load(path) for path in args.runs]
    labels = [f"r{i + 1}" for i in range(len(runs))]
    wanted = [v.strip() for v in args.variants.split(",") if v.strip()] if args.variants else None
    found = compare_runs(runs, labels, wanted)
    extra = breakdowns(runs, labels, args)
    if args.json:
        doc = found.as_dict()
        doc["breakdowns"] = [b.as_dict() for b in extra]
        sys.stdout.write(to_json(doc) + "\n")
        return 0
    from titjudge.report.analysis.render import print_comparison

    console = wide_console()
    print_comparison(found, console)
    print_breakdowns(extra, console, args.plot)
    return 0


def export(args: argparse.Namespace) -> int:
    from titjudge.report.analysis.export import export_frames
    from titjudge.report.analysis.record import load_analysed_run
    from titjudge.report.render import say

    record = load_analysed_run(args.run)
    assert record.run_dir is not None
    out = args.out if args.out is not None else record.run_dir / "frames"
    written = export_frames(record, out, args.format)
    console = wide_console()
    for path in written:
        say(console, f"wrote {path}")
    return 0
