"""files.json: every file a run wrote with its size and sha256 (`records.run_files`), written
last, after every other file (`write_run_files`), and checked by every reader (`check_run`).

What each reader checks, and what that costs (measured in docs/runs-and-analysis.md):
- `load_run` and the views built on it (`audit`, `compare`, `export`, `metrics RUN_DIR`,
  `titjudge.load_run`) check every listed file's size and sha256 before they read any: their
  numbers stand on all of them. sha256 runs at about 1.5 GB/s here, so it adds well under a
  second to reading even a large run, whose items.jsonl takes far longer to parse.
- `runs list` checks every listed file's size (a stat each) and hashes the file it reads,
  summary.json (a grid's ablation.json): about 0.2 ms per run, so hundreds list at once.
- `runs verify` checks what `load_run` checks, run by run.

A file the readers read but files.json does not list (a metrics.json put there later) is
refused too; any other extra file (`export`'s `frames/`, an audit page) is left alone.

A run dir from before files.json gets the checks its files allow (`legacy_problems`):
items.jsonl is UTF-8 JSON lines ending in a whole line, and its line count is the one
summary.json counts and the rows scores.csv holds; metrics.json is there when the run had
human pairs. A cut at a line boundary that keeps those counts cannot be seen without sizes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from titjudge.errors import DataError
from titjudge.files import atomic_write, jsonl_lines, read_json_object
from titjudge.records.run_files import FILES_FORMAT, FILES_NAME, FileDigest, RunFiles

#: the files a titjudge reader reads from a run (or grid) dir, besides pairs_<judge>.jsonl
READ_FILES = (
    "config.yaml",
    "items.jsonl",
    "scores.csv",
    "metrics.json",
    "summary.json",
    "ablation.json",
    "ablation.yaml",
)
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileProblem:
    """One file of a run that is not as the run wrote it, and what is wrong with it."""

    path: Path
    what: str

    def line(self) -> str:
        return f"{self.path}: {self.what}"


def digest_file(path: Path) -> FileDigest:
    """The size and sha256 of a file's bytes, read in chunks."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return FileDigest(size=size, sha256=digest.hexdigest())


def _walk(run_dir: Path) -> list[str]:
    """The regular files under `run_dir`, as posix paths relative to it: not files.json, and
    not inside a folder that holds a files.json of its own (an ablation grid's rows)."""
    found = []
    for folder, dirs, names in os.walk(run_dir):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not (here / d / FILES_NAME).is_file())
        for name in names:
            path = here / name
            if (here == run_dir and name == FILES_NAME) or not path.is_file():
                continue
            found.append(path.relative_to(run_dir).as_posix())
    return sorted(found)


def write_run_files(out: Path) -> RunFiles:
    """files.json for the run (or grid) being written in `out`: every file in it, as it is
    now. Written last: a file written after it would not be listed."""
    found = {}
    for name in _walk(out):
        try:
            found[name] = digest_file(out / name)
        except OSError as exc:
            raise DataError(f"{out / name}: cannot read it back ({exc.strerror or exc})") from None
    listing = RunFiles.of(found)
    atomic_write(out / FILES_NAME, listing.model_dump_json(indent=2) + "\n")
    return listing


def load_run_files(run_dir: Path) -> RunFiles | None:
    """The run's files.json, checked against its own digest; None when the run has none (a
    run dir from before files.json). A bad one is one DataError naming it."""
    path = run_dir / FILES_NAME
    if not path.exists():
        return None
    doc = read_json_object(path, "file list")
    found = doc.get("format")
    if isinstance(found, int) and found > FILES_FORMAT:
        raise DataError(
            f"{path}: file list format {found} is not one this titjudge reads "
            f"(up to {FILES_FORMAT}); upgrade titjudge"
        )
    try:
        listing = RunFiles.model_validate(doc)
    except ValidationError as error:
        first = error.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise DataError(f"{path}: not a run's file list ({loc}: {first['msg']})") from None
    outside = [n for n in listing.files if Path(n).is_absolute() or ".." in Path(n).parts]
    if outside:
        raise DataError(f"{path}: not a run's file list (it names {outside[0]!r}, outside the run)")
    if not listing.proves_itself:
        raise DataError(
            f"{path}: its entries do not match its own listing_sha256: the file list was "
            "changed after the run wrote it"
        )
    return listing


def _size(n: int) -> str:
    return f"{n:,} byte{'' if n == 1 else 's'}"


def _listed_problem(path: Path, want: FileDigest, hashed: bool) -> str | None:
    """What is wrong with one listed file, or None when it is as the run wrote it."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return f"missing; the run wrote it ({_size(want.size)}, {FILES_NAME})"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not path.is_file():
        return f"not a file; the run wrote a file here ({FILES_NAME})"
    if size != want.size:
        return (
            f"{_size(size)}, but the run wrote {_size(want.size)} ({FILES_NAME}): cut or "
            "changed since it was written"
        )
    if not hashed:
        return None
    try:
        found = digest_file(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if found.sha256 != want.sha256:
        return f"changed since the run wrote it (same size, another sha256 than {FILES_NAME}'s)"
    return None


def _read_by_readers(run_dir: Path) -> list[str]:
    """The files of `run_dir` a titjudge reader would read, present now."""
    names = [name for name in READ_FILES if (run_dir / name).is_file()]
    names.extend(p.name for p in sorted(run_dir.glob("pairs_*.jsonl")) if p.is_file())
    return names


def check_run(
    run_dir: Path, listing: RunFiles | None, hash_only: Collection[str] | None = None
) -> list[FileProblem]:
    """Every file of the run that is not as files.json says the run wrote it (sizes always;
    sha256 of every file, or with `hash_only` of those named alone), and every file a reader
    reads that files.json does not list. Without a listing, `legacy_problems`."""
    if listing is None:
        return legacy_problems(run_dir)
    problems = []
    for name, want in listing.files.items():
        hashed = hash_only is None or name in hash_only
        found = _listed_problem(run_dir / name, want, hashed)
        if found is not None:
            problems.append(FileProblem(run_dir / name, found))
    for name in _read_by_readers(run_dir):
        if name not in listing.files:
            problems.append(
                FileProblem(
                    run_dir / name, f"not written by this run ({FILES_NAME} does not list it)"
                )
            )
    return problems


def verify_run(run_dir: Path) -> RunFiles | None:
    """The run's files.json once every file checks out (`check_run`, sizes and sha256);
    the first file that does not is one DataError naming it (and how many more there are)."""
    listing = load_run_files(run_dir)
    problems = check_run(run_dir, listing)
    if problems:
        raise DataError(problems[0].line() + more_files(problems, ": titjudge runs verify"))
    return listing


def more_files(problems: list[FileProblem], then: str = "") -> str:
    """` (and N more files)` after the first of `problems`, or '' when it is the only one."""
    more = len(problems) - 1
    return f" (and {more} more file{'' if more == 1 else 's'}{then})" if more else ""


# ------------------------------------------------------------------ runs without files.json


def _text(path: Path) -> str | FileProblem:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return FileProblem(path, "not UTF-8 text (binary, or damaged)")
    except OSError as exc:
        return FileProblem(path, f"cannot be read ({exc.strerror or exc})")


def _jsonl_lines(path: Path) -> int | FileProblem:
    """The lines of a JSON-lines file the run wrote whole, or what is wrong with it."""
    text = _text(path)
    if isinstance(text, FileProblem):
        return text
    lines = [line for line in jsonl_lines(text) if line.strip()]
    if not lines:
        return FileProblem(path, "empty; a run writes one line per item and variant")
    try:
        last = json.loads(lines[-1])
    except json.JSONDecodeError:
        last = None
    if not text.endswith("\n") or not isinstance(last, dict):
        return FileProblem(path, f"cut: line {len(lines)} is not a whole JSON line")
    return len(lines)


def _csv_rows(path: Path) -> int | FileProblem:
    text = _text(path)
    if isinstance(text, FileProblem):
        return text
    if text and not text.endswith("\n"):
        return FileProblem(path, "cut: its last row has no end (a run ends every row)")
    try:
        return max(0, sum(1 for row in csv.reader(io.StringIO(text)) if row) - 1)
    except csv.Error as exc:
        return FileProblem(path, f"not a CSV file a run writes ({exc})")


def legacy_problems(run_dir: Path) -> list[FileProblem]:
    """What can be checked of a run dir from before files.json (the module docstring): each
    file whole, then the count of (item, variant) results each holds against summary.json's
    (or, without one, scores.csv's rows against items.jsonl's lines)."""
    from titjudge.report.run_summary import load_summary

    items = run_dir / "items.jsonl"
    if not items.is_file():
        return []  # not a run's dir (a grid's): nothing of a run to check
    lines = _jsonl_lines(items)
    if isinstance(lines, FileProblem):
        return [lines]
    problems = [
        found
        for pairs in sorted(run_dir.glob("pairs_*.jsonl"))
        if isinstance(found := _jsonl_lines(pairs), FileProblem)
    ]
    try:
        summary = load_summary(run_dir)
    except DataError as error:
        path = run_dir / "summary.json"
        return [*problems, FileProblem(path, str(error).removeprefix(f"{path}: "))]
    counted = sum(per.total for per in summary.variants.values()) if summary else 0
    if counted and counted != lines:
        problems.append(
            FileProblem(
                items, f"{lines} lines, but summary.json counts {counted} (item, variant) results"
            )
        )
    scores = run_dir / "scores.csv"
    rows = _csv_rows(scores) if scores.is_file() else None
    if isinstance(rows, FileProblem):
        problems.append(rows)
    elif rows is not None and rows != (counted or lines):
        held = (
            f"summary.json counts {counted} results"
            if counted
            else f"items.jsonl has {lines} lines"
        )
        problems.append(FileProblem(scores, f"{rows} rows, but {held} (one row each)"))
    if summary is not None and summary.human_pairs and not (run_dir / "metrics.json").is_file():
        problems.append(
            FileProblem(
                run_dir / "metrics.json",
                f"missing; the run had {summary.human_pairs} human pairs, so it wrote one",
            )
        )
    return problems


__all__ = [
    "FileProblem",
    "check_run",
    "digest_file",
    "legacy_problems",
    "load_run_files",
    "more_files",
    "verify_run",
    "write_run_files",
]
