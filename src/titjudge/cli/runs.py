"""`titjudge runs list [DIR]`, `titjudge runs prune DIR --keep N` and `titjudge runs verify
DIR`: the run history, and whether each run's files are the ones it wrote.

DIR is a config's `<run.out>/<name>` folder (one run per `<run id>/`, `LATEST` naming the
last to finish) or a `run.out` folder holding several of them (`report.runs`); `verify` also
takes one run dir.
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
    """Add `runs` with its `list`, `verify` and `prune` subcommands."""
    p = subparsers.add_parser(
        "runs",
        help="list, verify or prune the runs kept under <run.out>/<name>/",
        description="Every run is kept in <run.out>/<name>/<run id>/; LATEST names the last "
        "one to finish. List them, check their files, or remove all but the newest.",
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
    q = command(
        sub,
        "verify",
        verify_runs,
        "check every run's files against the sizes and sha256 its files.json lists; one line "
        "per run that does not hold, exit 2 if any",
    )
    q.add_argument(
        "dir",
        type=Path,
        metavar="DIR",
        help="a run dir, a <run.out>/<name> folder (every run in it), or a run.out folder",
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
    """One line per run: id, what it holds, and which one LATEST names; a run whose files
    do not match its files.json says which, and the command then exits 2."""
    from titjudge.errors import DataError
    from titjudge.report import runs

    bad = []
    for history in _histories(args.dir):
        entries = runs.list_runs(history)
        _say(f"{history}: {len(entries)} run{'' if len(entries) == 1 else 's'}")
        for entry in entries:
            mark = "  <- LATEST" if entry.latest else ""
            listed = "" if entry.listed else "; no files.json"
            _say(f"  {entry.run_id}  {entry.what}{listed}{mark}")
            if entry.problem is not None:
                _say(f"    does not hold: {entry.problem}")  # the file, and what is wrong
                bad.append(entry)
        partial = runs.partial_dirs(history)
        if partial:
            _say(
                f"  {len(partial)} unfinished ({', '.join(p.name for p in partial)}): a run "
                "still going, or one killed before it could clean up; remove them when no "
                "run is going"
            )
    if bad:
        verb = "does" if len(bad) == 1 else "do"
        raise DataError(
            f"{_runs(len(bad))} {verb} not match {'its' if len(bad) == 1 else 'their'} "
            f"files.json (named above; `titjudge runs verify {args.dir}` checks every sha256)"
        )
    return 0


def _runs(n: int) -> str:
    return f"{n} run{'' if n == 1 else 's'}"


def verify_runs(args: argparse.Namespace) -> int:
    """One line per run that does not hold (and per run with no files.json), then a count;
    exit 2 when any does not hold."""
    from titjudge.errors import DataError
    from titjudge.report.verify import verify_runs as check

    checks, partial = check(args.dir)
    for found in checks:
        line = found.line()
        if line is not None:
            _say(line)
    bad = sum(not c.ok for c in checks)
    unlisted = sum(c.ok and not c.listed for c in checks)
    held = len(checks) - bad - unlisted
    counts = [f"{held} hold{'s' if held == 1 else ''}"]
    if bad:
        counts.append(f"{bad} do{'es' if bad == 1 else ''} not")
    if unlisted:
        counts.append(f"{unlisted} ha{'s' if unlisted == 1 else 've'} no files.json")
    if partial:
        counts.append(f"{partial} unfinished .partial dir{'' if partial == 1 else 's'} passed over")
    _say(f"{_runs(len(checks))} checked: {', '.join(counts)}")
    if bad:
        verb = "does" if bad == 1 else "do"
        raise DataError(f"{bad} of {_runs(len(checks))} {verb} not hold (named above)")
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
