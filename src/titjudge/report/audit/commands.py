"""CLI handler: `titjudge audit RUN_DIR [--html FILE] [--pair ID] [--disagreements [--variant V] [--limit N]]`."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

from titjudge.errors import ConfigError

DEFAULT_LIMIT = 20


def _console() -> Console:
    return Console(width=max(100, Console().width), highlight=False)


def audit(args: argparse.Namespace) -> int:
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
    console = _console()
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
