"""`titjudge runs list [DIR]` and `titjudge runs prune DIR --keep N`: the run history.

DIR is a config's `<run.out>/<name>` folder (one run per `<run id>/`, `LATEST` naming the
last to finish) or a `run.out` folder holding several of them (`report.runs`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from titjudge.cli.common import command


def _say(text: str) -> None:
    """A line on stdout; paths come from the filesystem: no terminal control gets through."""
    from titjudge.safety import terminal_safe

    print(terminal_safe(text))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `runs` with its `list` and `prune` subcommands."""
    p = subparsers.add_parser(
        "runs",
        help="list or prune the runs kept under <run.out>/<name>/",
        description="Every run is kept in <run.out>/<name>/<run id>/; LATEST names the last "
        "one to finish. List them, or remove all but the newest.",
    )
    sub = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    q = command(sub, "list", list_runs, "list the runs of a name folder, newest last")
    q.add_argument(
        "dir",
        type=Path,
        nargs="?",
        default=Path("runs"),
        metavar="DIR",
        help="<run.out>/<name>, or a run.out folder to list every name in it (default: runs)",
    )
    q = command(sub, "prune", prune_runs, "remove all but the N newest runs (LATEST is kept)")
    q.add_argument("dir", type=Path, metavar="DIR", help="<run.out>/<name>, or a run.out folder")
    q.add_argument("--keep", type=int, required=True, metavar="N", help="runs to keep per name")
    q.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")


def _histories(folder: Path) -> list[Path]:
    from titjudge.errors import DataError
    from titjudge.report.runs import histories

    if not folder.exists():
        raise DataError(f"{folder}: not found")
    found = histories(folder)
    if not found:
        raise DataError(f"{folder}: holds no runs (no LATEST, no <run id>/ dirs)")
    return found


def list_runs(args: argparse.Namespace) -> int:
    """One line per run: id, what it holds, and which one LATEST names."""
    from titjudge.report import runs

    for history in _histories(args.dir):
        entries = runs.list_runs(history)
        _say(f"{history}: {len(entries)} run{'' if len(entries) == 1 else 's'}")
        for entry in entries:
            mark = "  <- LATEST" if entry.latest else ""
            _say(f"  {entry.run_id}  {entry.what}{mark}")
        partial = runs.partial_dirs(history)
        if partial:
            _say(
                f"  {len(partial)} unfinished ({', '.join(p.name for p in partial)}): a run "
                "still going, or one killed before it could clean up; remove them when no "
                "run is going"
            )
    return 0


def prune_runs(args: argparse.Namespace) -> int:
    """Remove all but the `--keep` newest runs of each name; say what went."""
    from titjudge.errors import ConfigError
    from titjudge.report import runs

    if args.keep < 1:
        raise ConfigError(f"--keep must be at least 1, got {args.keep}")
    verb = "would remove" if args.dry_run else "removed"
    for history in _histories(args.dir):
        gone = runs.prune(history, args.keep, dry_run=args.dry_run)
        kept = len(runs.run_ids(history)) - (len(gone) if args.dry_run else 0)
        _say(f"{history}: {verb} {len(gone)}, kept {kept}")
        for path in gone:
            _say(f"  {verb} {path.name}")
    return 0
