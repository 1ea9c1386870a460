"""Run history: every run in a dir of its own, written aside and moved into place at the end.

Layout: `<run.out>/<name>/<run id>/` holds one run (an ablation: its tables and `rows/`), and
`<run.out>/<name>/LATEST`, a one-line text file, holds the id of the run that finished last.
A file, not a symlink: it works on every OS and filesystem, and a reader resolves it the same
way everywhere (`resolve_run`). A run id is the UTC start time to the second, then four hex
digits holding the millisecond and six random bits (`20261125T002233Z-1a2b`): ids sort by
start time to the millisecond, and two runs started in the same second (or millisecond)
still get two dirs. `--out DIR` names the run dir exactly; a DIR that exists and is not
empty is refused (one line, exit 2), never merged into or moved.

A run writes into a staging dir beside its target (`.<id>.partial`, or `.<DIR name>.<id>.partial`
for `--out`) and renames it into place when everything is written, so a reader never sees
half a run: a run that fails or is interrupted (a metric raising, a full disk, Ctrl-C) removes
its staging dir and leaves every earlier run, and `LATEST`, as they were. Only a run killed
outright (SIGKILL, power loss) leaves a `.partial` dir behind; `titjudge runs list` shows them.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from titjudge.errors import ConfigError, DataError
from titjudge.files import atomic_write, read_text
from titjudge.records.grid_record import GRID_FILE, GridRecord, GridRow
from titjudge.records.origins import VariantOrigin
from titjudge.records.summary import RunSummary
from titjudge.report.run_summary import load_summary

#: the file in a name dir that holds the id of its latest run
LATEST = "LATEST"
#: what a staging dir's name ends with
PARTIAL = ".partial"
RUN_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{4}$")
#: a dir holding one of these is a run dir itself (a run's or an ablation's)
RUN_FILES = ("summary.json", "items.jsonl", "ablation.json")


def new_run_id(now: datetime | None = None) -> str:
    """`20261125T002233Z-1a2b`: the UTC time to the second, then four hex digits holding the
    millisecond and six random bits (`ms * 64 + r`, below 64,000), so ids sort by start time
    to the millisecond and two runs started in the same millisecond still differ (a drawn id
    that is taken is drawn again: `stage_run`)."""
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    tail = (stamp.microsecond // 1000) * 64 + secrets.randbelow(64)
    return f"{stamp:%Y%m%dT%H%M%SZ}-{tail:04x}"


@dataclass
class StagedRun:
    """A run being written: `staging` now, `target` once `commit` has moved it there."""

    run_id: str
    target: Path
    staging: Path
    #: the name dir whose LATEST names this run once committed; None for an exact `--out`
    history: Path | None

    def commit(self) -> Path:
        """Move the finished run into place, then point LATEST at it; returns `target`."""
        if self.history is None and self.target.exists():
            if not _is_empty_dir(self.target):
                raise DataError(
                    f"{self.target} was created while the run was going; nothing was "
                    f"overwritten, and this run's files are in {self.staging}"
                )
            self.target.rmdir()
        while True:
            try:
                os.rename(self.staging, self.target)
                break
            except OSError as exc:
                if self.history is not None and self.target.exists():
                    # another run finished under the same id (same second, same 16 bits)
                    self.run_id = new_run_id()
                    self.target = self.history / self.run_id
                    continue
                raise DataError(
                    f"cannot move the finished run from {self.staging} to {self.target} "
                    f"({exc.strerror or exc})"
                ) from None
        if self.history is not None:
            atomic_write(self.history / LATEST, self.run_id + "\n")
        return self.target

    def discard(self) -> None:
        """Remove the staging dir and everything in it (a failed or interrupted run)."""
        shutil.rmtree(self.staging, ignore_errors=True)


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())


def _not_writable(folder: Path, exc: OSError) -> ConfigError:
    return ConfigError(f"output dir {folder}: not writable ({exc.strerror or exc})")


def stage_run(*, history: Path | None = None, exact: Path | None = None) -> StagedRun:
    """Make the staging dir of a new run, proving the output folder writable before any model
    is called: in the name dir `history` under a new id, or for the exact run dir `exact`
    (refused when it exists and is not empty)."""
    if (history is None) == (exact is None):
        raise ValueError("stage_run needs exactly one of history and exact")
    if exact is not None:
        if exact.exists() and not _is_empty_dir(exact):
            raise ConfigError(
                f"--out {exact}: already exists and is not empty; a run never overwrites "
                "another, so name a new dir (or leave out --out: runs then go to "
                "<run.out>/<name>/<run id>/)"
            )
        folder = exact.parent
    else:
        assert history is not None
        folder = history
    try:
        folder.mkdir(parents=True, exist_ok=True)
        while True:
            run_id = new_run_id()
            target = exact if exact is not None else folder / run_id
            prefix = f".{exact.name}." if exact is not None else "."
            staging = folder / f"{prefix}{run_id}{PARTIAL}"
            if exact is None and target.exists():
                continue
            try:
                staging.mkdir()
            except FileExistsError:
                continue
            return StagedRun(run_id=run_id, target=target, staging=staging, history=history)
    except OSError as exc:
        raise _not_writable(folder, exc) from None


# ----------------------------------------------------------------------------- reading


def is_run_dir(path: Path) -> bool:
    return any((path / name).is_file() for name in RUN_FILES)


def run_ids(history: Path) -> list[str]:
    """The finished runs in a name dir, oldest first (ids sort by start time)."""
    if not history.is_dir():
        return []
    return sorted(p.name for p in history.iterdir() if RUN_ID.match(p.name) and p.is_dir())


def latest_id(history: Path) -> str | None:
    """The id LATEST names (checked: a run id whose dir exists), else the newest id, else None."""
    pointer = history / LATEST
    if pointer.is_file():
        run_id = read_text(pointer, "LATEST file").strip()
        if not RUN_ID.match(run_id) or not (history / run_id).is_dir():
            raise DataError(f"{pointer}: names run {run_id!r}, which is not a run dir in {history}")
        return run_id
    ids = run_ids(history)
    return ids[-1] if ids else None


def is_history(path: Path) -> bool:
    """A name dir: it has a LATEST file or at least one run-id dir."""
    return (path / LATEST).is_file() or bool(run_ids(path))


def resolve_run(path: str | os.PathLike[str]) -> Path:
    """The run dir that `path` means: a name dir's latest run (LATEST, else its newest id),
    or `path` itself when it is a run dir. Anything else is one DataError."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: not found")
    if not path.is_dir():
        raise DataError(f"{path}: expected a run dir or a folder of runs, found a file")
    found = latest_id(path)
    if found is not None:
        return path / found
    if is_run_dir(path):
        return path
    raise DataError(
        f"{path}: not a run dir, nor a folder of runs (no {LATEST}, no run ids); "
        "make one with `titjudge run`"
    )


@dataclass(frozen=True)
class RunEntry:
    """One finished run of a name dir, for `titjudge runs list`."""

    run_id: str
    path: Path
    latest: bool
    #: `24 items, 2 failed; fallback: none; stopped: none` / `ablation, 3 rows`, from the
    #: run's summary.json or ablation.json
    what: str
    #: the first of its files that is not as files.json says the run wrote it (sizes, and
    #: the sha256 of the file read for `what`: `files_problem`); None when they hold
    problem: str | None = None
    #: whether the run has a files.json (a run from before it has none)
    listed: bool = True


def _fallbacks(summary: RunSummary) -> list[str] | None:
    """`tit_llm 48 of 48 (100%) from lexical` per variant that fell back, from the summary's
    `origins` (its status counts where an older summary has none); None where it records
    neither."""
    origins = summary.origins
    if origins is None and "variants" not in summary.model_fields_set:
        return None
    if origins is None:
        origins = {name: VariantOrigin.of(counts) for name, counts in summary.variants.items()}
    return [f"{name} {o.share_text()}" for name, o in origins.items() if o.n_fallback]


def _fallback_text(summary: RunSummary) -> str:
    """The variants that fell back (`_fallbacks`), `none`, or `?` (not recorded)."""
    fell = _fallbacks(summary)
    return "?" if fell is None else ", ".join(fell) or "none"


def _stopped_text(summary: RunSummary) -> str:
    """The models the run stopped; `none`; `?` where the summary does not record them."""
    stopped = summary.stopped_models
    return "?" if stopped is None else ", ".join(stopped) or "none"


def _describe_grid(grid: Path, rows: list[GridRow]) -> str:
    """`ablation, 2 rows, 3 failed items; fallback: sharp/tit_llm 9 of 9 (100%) from
    lexical; stopped: ...`: its rows' runs' summaries (rows/<name>/summary.json) added up."""
    summaries = {str(row.name): load_summary(grid / "rows" / str(row.name)) for row in rows}
    found = {name: summary for name, summary in summaries.items() if summary is not None}
    what = f"ablation, {len(rows)} rows"
    if not found:
        return what
    failed = sum(summary.failed_items for summary in found.values())
    fell = [f"{name}/{text}" for name, s in found.items() for text in _fallbacks(s) or []]
    stopped = sorted({m for s in found.values() for m in s.stopped_models or []})
    known = all(s.stopped_models is not None for s in found.values())
    return (
        f"{what}, {failed} failed items; fallback: {', '.join(fell) or 'none'}; "
        f"stopped: {', '.join(stopped) or ('none' if known else '?')}"
    )


def _describe(run: Path) -> str:
    try:
        summary = load_summary(run)
        if summary is not None:  # a count the file lacks (laid out by hand) shows as ?
            items, failed = (
                getattr(summary, key) if key in summary.model_fields_set else "?"
                for key in ("items", "failed_items")
            )
            return (
                f"{items} items, {failed} failed; fallback: {_fallback_text(summary)}; "
                f"stopped: {_stopped_text(summary)}"
            )
        if (run / GRID_FILE).is_file():
            return _describe_grid(run, GridRecord.read(run).rows)
    except DataError:
        return "unreadable summary"
    return "no summary"


def files_problem(run: Path) -> tuple[str | None, bool]:
    """The first file of `run` that is not as its files.json lists it, and whether it has a
    files.json: every listed file's size, and the sha256 of the one `runs list` reads
    (summary.json, or a grid's ablation.json) alone, so hundreds of runs list at once."""
    from titjudge.report.run_files import check_run, load_run_files

    try:
        listing = load_run_files(run)
    except DataError as error:
        return str(error).removeprefix(f"{run}{os.sep}"), True
    if listing is None:
        return None, False
    problems = check_run(run, listing, hash_only=("summary.json", "ablation.json"))
    if not problems:
        return None, True
    return f"{problems[0].path.relative_to(run)}: {problems[0].what}", True


def list_runs(history: Path) -> list[RunEntry]:
    """A name dir's finished runs, oldest first, the one LATEST names marked, each with the
    first of its files that does not match its files.json (`files_problem`)."""
    latest = latest_id(history)
    found = []
    for run_id in run_ids(history):
        problem, listed = files_problem(history / run_id)
        what = _describe(history / run_id)
        found.append(RunEntry(run_id, history / run_id, run_id == latest, what, problem, listed))
    return found


def partial_dirs(history: Path) -> list[Path]:
    """Staging dirs: runs in progress, or killed before they could finish or clean up."""
    if not history.is_dir():
        return []
    return sorted(p for p in history.iterdir() if p.name.endswith(PARTIAL) and p.is_dir())


def histories(path: Path) -> list[Path]:
    """`path` when it is a name dir, else the name dirs directly in it (a `run.out` folder)."""
    if not path.is_dir():
        raise DataError(f"{path}: not a folder of runs")
    if is_history(path):
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and is_history(p))


def prune(history: Path, keep: int, dry_run: bool = False) -> list[Path]:
    """Remove all but the `keep` newest runs of a name dir; the one LATEST names always
    stays. Returns the removed (or, with `dry_run`, the would-be removed) run dirs."""
    if keep < 1:
        raise ConfigError(f"--keep must be at least 1, got {keep}")
    latest = latest_id(history)
    ids = run_ids(history)
    kept = set(ids[-keep:]) | ({latest} if latest else set())
    doomed = [history / run_id for run_id in ids if run_id not in kept]
    if not dry_run:
        for run in doomed:
            try:
                shutil.rmtree(run)
            except OSError as exc:
                raise DataError(f"{run}: cannot remove ({exc.strerror or exc})") from None
    return doomed


__all__ = [
    "LATEST",
    "RunEntry",
    "StagedRun",
    "files_problem",
    "histories",
    "is_history",
    "list_runs",
    "new_run_id",
    "partial_dirs",
    "prune",
    "resolve_run",
    "run_ids",
    "stage_run",
]
