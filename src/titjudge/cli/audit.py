"""`titjudge audit RUN_DIR [--html DIR] [--json] [--pair ID | --item ID] [--disagreements
[--variant V] [--limit N]]`; a run without human pairs lists its items (`--limit N` of them)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from titjudge.cli.common import arg, command, wide_console

#: pairs `--disagreements` shows without `--limit`
DEFAULT_LIMIT = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `audit`."""
    command(
        subparsers,
        "audit",
        audit,
        "audit a run pair by pair: why each judge agreed or disagreed with humans",
        arg(
            "run_dir",
            type=Path,
            metavar="RUN_DIR",
            help="run dir written by `titjudge run`, or its <run.out>/<name> folder (its latest "
            "run)",
        ),
        arg(
            "--html",
            type=Path,
            metavar="DIR",
            help="write the run as the workbench's static copy: DIR/index.html works from "
            "file:// (`titjudge view RUN_DIR --bundle DIR`)",
        ),
        arg(
            "--json",
            action="store_true",
            help="print the audit as JSON: per variant its numbers, counts and provenance; per "
            "pair each variant's outcome (a pairwise judge's verdict and both orders)",
        ),
        arg("--pair", metavar="PAIR_ID", help="print one pair: '<item_a>|<item_b>'"),
        arg("--item", metavar="ITEM_ID", help="print one item: description, rationales"),
        arg(
            "--disagreements",
            action="store_true",
            help="print the pairs judged against the human verdict, most confident first",
        ),
        arg("--variant", metavar="V", help="only this variant (with --disagreements or --pair)"),
        arg(
            "--limit",
            type=int,
            metavar="N",
            help="with --disagreements: show N pairs; for a run without human pairs: list N "
            "items (default 20)",
        ),
    )


def write_page(data: Any, out: Path, console: Any) -> None:
    """The run as the workbench's bundle at `out` (a folder: index.html, bundle.js, images)."""
    from rich.text import Text

    from titjudge.workbench.bundle import write_bundle
    from titjudge.workbench.catalog import Catalog

    started = time.perf_counter()
    page = write_bundle(Catalog.find(data.run_dir), out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
    plural = "" if len(data.variants) == 1 else "s"
    shown = f"{len(data.pairs)} pairs" if data.pairs else f"{len(data.items)} items, no pairs"
    console.print(
        Text(
            f"wrote {page} ({size:.1f} MB, {shown}, {len(data.variants)} variant{plural}) in "
            f"{time.perf_counter() - started:.1f} s: open it in a browser"
        )
    )


def audit(args: argparse.Namespace) -> int:
    """Summary of a run dir, or its HTML page, one pair, or the pairs judged against humans."""

    from titjudge.errors import ConfigError, DataError
    from titjudge.report.audit.data import check_variant, disagreements, find_pair
    from titjudge.report.audit.load import load_audit
    from titjudge.report.audit.terminal import (
        print_audit_summary,
        print_disagreements,
        print_item,
        print_pair,
    )

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}")
    data = load_audit(args.run_dir)
    if args.json:
        import json
        import sys

        from titjudge.files import jsonable
        from titjudge.report.audit.json_view import audit_json

        sys.stdout.write(json.dumps(jsonable(audit_json(data)), indent=2, allow_nan=False) + "\n")
        return 0
    if not data.pairs and (args.pair is not None or args.disagreements):
        raise DataError(
            f"{data.run_dir}: the run has no human pairs (no data.human_pairs); "
            "browse its items with --item ITEM_ID or --html DIR"
        )
    overview = args.html is None and args.pair is None and args.item is None
    if args.limit is not None and not args.disagreements and (data.pairs or not overview):
        raise ConfigError("--limit goes with --disagreements (or lists a run's items)")
    if args.variant is not None:
        check_variant(data, args.variant)
    console = wide_console(prose=True, highlight=False)
    if overview and not args.disagreements:
        print_audit_summary(data, console, args.limit or DEFAULT_LIMIT)
        if not data.pairs:
            console.print(
                "next: --html DIR (the workbench's copy: items, descriptions, rationales), "
                "--item ITEM_ID",
                markup=False,
            )
            return 0
        console.print(
            "next: --html DIR (the workbench's copy), --pair 'A|B', --item ID, "
            "--disagreements [--variant V]",
            markup=False,
        )
        return 0
    if args.html is not None:
        write_page(data, Path(args.html), console)
    if args.pair is not None:
        variants = [args.variant] if args.variant else None
        print_pair(data, find_pair(data, args.pair), console, variants=variants, full=True)
    if args.item is not None:
        if args.item not in data.items:
            from titjudge.errors import did_you_mean

            raise DataError(
                f"{data.run_dir}: no item {args.item!r} in this run"
                f"{did_you_mean(args.item, data.items)}"
            )
        print_item(data, data.items[args.item], console)
    if args.disagreements:
        every = disagreements(data, args.variant)
        limit = args.limit or DEFAULT_LIMIT
        print_audit_summary(data, console, limit)  # pairs: the no-pairs case raised above
        print_disagreements(data, every[:limit], len(every), console, args.variant)
        if len(every) > limit:
            console.print(f"{len(every) - limit} more; raise --limit to see them")
    return 0
