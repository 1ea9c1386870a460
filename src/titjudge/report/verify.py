"""`titjudge runs verify DIR`: every run in a folder checked against its files.json.

DIR is one run dir (an ablation grid's dir: the grid and each of its rows), a config's
`<run.out>/<name>` folder (every run in it, not only the one LATEST names), or a `run.out`
folder holding several of those. Each run is checked as `load_run` checks it
(`report.run_files`: every listed file's size and sha256, no unlisted file a reader reads);
a run dir from before files.json gets the checks its files allow and is said to have none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from titjudge.errors import DataError, TitjudgeError
from titjudge.records.run_config import RunConfigFile
from titjudge.records.run_files import FILES_NAME
from titjudge.report.run_files import FileProblem, check_run, load_run_files, more_files
from titjudge.report.runs import histories, is_history, is_run_dir, partial_dirs, run_ids


@dataclass
class RunCheck:
    """One run's check: what does not hold (nothing: it holds), and whether it had a list."""

    path: Path
    problems: list[FileProblem] = field(default_factory=list)
    listed: bool = True

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str | None:
        """The run's line for `runs verify`: its first problem (and how many more), or the
        fact that it has no files.json; None for a listed run that holds."""
        if self.problems:
            first, tail = self.problems[0], more_files(self.problems)
            return f"{self.path}: {first.path.relative_to(self.path)}: {first.what}{tail}"
        if not self.listed:
            checked = (
                "only its lines and counts could be checked, and they hold"
                if (self.path / "items.jsonl").is_file()
                else "nothing of it could be checked"  # an ablation grid's own files
            )
            return (
                f"{self.path}: no manifest (written before {FILES_NAME}"
                f"{_written_by(self.path)}): {checked}"
            )
        return None


def _written_by(run: Path) -> str:
    """`, by titjudge X` as the run's config.yaml records it, or '' when it does not say."""
    try:
        resolved = RunConfigFile.read(run).resolved
    except TitjudgeError:  # an unreadable config.yaml is not what this line is about
        return ""
    version = resolved.packages.get("titjudge") if resolved is not None else None
    return f", by titjudge {version}" if version else ""


def check_one(run: Path) -> RunCheck:
    """One run (or grid) dir, checked as `load_run` checks it."""
    try:
        listing = load_run_files(run)
    except DataError as error:
        return RunCheck(run, [FileProblem(run / FILES_NAME, _what(error, run / FILES_NAME))])
    return RunCheck(run, check_run(run, listing), listed=listing is not None)


def _what(error: DataError, path: Path) -> str:
    """A DataError's text without the path it starts with."""
    text = str(error)
    return text.removeprefix(f"{path}: ")


def _with_rows(run: Path) -> Iterator[Path]:
    """A run dir, then each row run of it when it is an ablation grid's dir."""
    yield run
    rows = run / "rows"
    if (run / "ablation.json").is_file() and rows.is_dir():
        yield from (p for p in sorted(rows.iterdir()) if p.is_dir() and is_run_dir(p))


def runs_under(path: Path) -> tuple[list[Path], int]:
    """Every run dir `path` holds (see the module docstring) and how many unfinished
    staging dirs (`.partial`) were passed over."""
    if not path.exists():
        raise DataError(f"{path}: not found")
    if not path.is_dir():
        raise DataError(f"{path}: expected a run dir or a folder of runs, found a file")
    if is_history(path) or not is_run_dir(path):
        folders = histories(path)
        if not folders:
            raise DataError(f"{path}: holds no runs (no LATEST, no <run id>/ dirs, no run files)")
        runs = [f / run_id for f in folders for run_id in run_ids(f)]
        partial = sum(len(partial_dirs(f)) for f in folders)
    else:
        runs, partial = [path], 0
    return [r for run in runs for r in _with_rows(run)], partial


def verify_runs(path: Path) -> tuple[list[RunCheck], int]:
    """Each run `path` holds, checked; and the staging dirs passed over."""
    runs, partial = runs_under(path)
    return [check_one(run) for run in runs], partial


__all__ = ["RunCheck", "check_one", "runs_under", "verify_runs"]
