"""`titjudge audit RUN_DIR [--html FILE] [--pair ID] [--disagreements [--variant V] [--limit N]]`."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from titjudge.cli.common import command, wide_console

#: pairs `--disagreements` shows without `--limit`
DEFAULT_LIMIT = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `audit`."""
    p = command(
        subparsers,
        "audit",
        audit,
        "audit a run pair by pair: why each judge agreed or disagreed with humans",
    )
    p.add_argument(
        "run_dir", type=Path, metavar="RUN_DIR", help="run dir written by `titjudge run`"
    )
    p.add_argument(
        "--html", type=Path, metavar="FILE", help="write one self-contained HTML audit page"
    )
    p.add_argument("--pair", metavar="PAIR_ID", help="print one pair: '<item_a>|<item_b>'")
    p.add_argument(
        "--disagreements",
        action="store_true",
        help="print the pairs judged against the human verdict, most confident first",
    )
    p.add_argument(
        "--variant", metavar="V", help="only this variant (with --disagreements or --pair)"
    )
    p.add_argument(
        "--limit", type=int, metavar="N", help="with --disagreements: show N pairs (default 20)"
    )


def audit(args: argparse.Namespace) -> int:
    """Summary of a run dir, or its HTML page, one pair, or the pairs judged against humans."""
    from rich.text import Text

    from titjudge.errors import ConfigError
    from titjudge.report.audit.data import check_variant, disagreements, find_pair
    from titjudge.report.audit.load import load_audit
    from titjudge.report.audit.terminal import print_disagreements, print_pair, print_summary

    if args.limit is not None and not args.disagreements:
        raise ConfigError("--limit goes with --disagreements")
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}")
    data = load_audit(args.run_dir)
    if args.variant is not None:
        check_variant(data, args.variant)
    console = wide_console(highlight=False)
    if args.html is None and args.pair is None and not args.disagreements:
        print_summary(data, console)
        console.print(
            "next: --html FILE (the audit page), --pair 'A|B', --disagreements [--variant V]"
        )
        return 0
    if args.html is not None:
        from titjudge.report.audit.html import write_audit_html

        started = time.perf_counter()
        out = write_audit_html(data, Path(args.html))
        size = out.stat().st_size / 1e6
        plural = "" if len(data.variants) == 1 else "s"
        console.print(
            Text(
                f"wrote {out} ({size:.1f} MB, {len(data.pairs)} pairs, {len(data.variants)} "
                f"variant{plural}) in {time.perf_counter() - started:.1f} s"
            )
        )
    if args.pair is not None:
        variants = [args.variant] if args.variant else None
        print_pair(data, find_pair(data, args.pair), console, variants=variants, full=True)
    if args.disagreements:
        every = disagreements(data, args.variant)
        limit = args.limit or DEFAULT_LIMIT
        print_summary(data, console)
        print_disagreements(data, every[:limit], len(every), console, args.variant)
        if len(every) > limit:
            console.print(f"{len(every) - limit} more; raise --limit to see them")
    return 0
