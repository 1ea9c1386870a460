"""Several runs as one set of frames (`titjudge.load_runs`): each run's items, pairs and
metrics frames stacked, with a leading `run` column naming the run it came from."""

from __future__ import annotations

import glob
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from titjudge.errors import DataError
from titjudge.report.analysis.record import AnalysedRun, load_analysed_run
from titjudge.report.runs import resolve_run

if TYPE_CHECKING:
    import pandas as pd


def expand_paths(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """Run paths from one path, one glob pattern, or a list of either (globs expanded,
    sorted). A path given exactly is kept as given (`load_run` says what is wrong with it);
    of what a pattern matches, only runs are kept: a run dir, or a folder of runs whose
    latest run is one. A config folder's `LATEST` file, an ablation's dir or a stray file
    that `runs/*/*` also matches is skipped. A pattern that matches no run is a DataError."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    found: list[Path] = []
    for entry in given:
        text = str(entry)
        if not glob.has_magic(text):
            found.append(Path(text))
            continue
        matched = sorted(glob.glob(text))
        runs = [Path(m) for m in matched if is_loadable_run(Path(m))]
        if not runs:
            seen = f"it matches {len(matched)} paths, none a run dir" if matched else "nothing"
            raise DataError(f"{text}: no run matches this pattern ({seen})")
        found.extend(runs)
    if not found:
        raise DataError("no run given")
    return found


def is_loadable_run(path: Path) -> bool:
    """Whether `load_run(path)` finds a run there: a run dir with items.jsonl, or a folder
    of runs whose latest is one."""
    if not path.is_dir():
        return False
    try:
        return (resolve_run(path) / "items.jsonl").is_file()
    except DataError:
        return False


def run_labels(records: list[AnalysedRun]) -> list[str]:
    """Each run's label: its run dir's name (the run id), or its whole path when two share one."""
    names = [r.run_dir.name if r.run_dir else "" for r in records]
    return [
        n if names.count(n) == 1 else str(r.run_dir) for n, r in zip(names, records, strict=True)
    ]


class RunSet:
    """Runs read with `load_run`; `items`, `pairs` and `metrics` stack their frames."""

    def __init__(self, records: list[AnalysedRun]):
        self.records = records
        self.labels = run_labels(records)

    @classmethod
    def load(cls, paths: str | Path | Iterable[str | Path]) -> RunSet:
        return cls([load_analysed_run(p) for p in expand_paths(paths)])

    def __len__(self) -> int:
        return len(self.records)

    def _stacked(self, frame: str) -> pd.DataFrame:
        from titjudge.report.analysis.frames import require_pandas

        pd = require_pandas()
        parts = []
        for label, record in zip(self.labels, self.records, strict=True):
            part = getattr(record, frame)
            part.insert(0, "run", label)
            parts.append(part)
        return pd.concat(parts, ignore_index=True)

    @property
    def items(self) -> pd.DataFrame:
        return self._stacked("items")

    @property
    def pairs(self) -> pd.DataFrame:
        return self._stacked("pairs")

    @property
    def metrics(self) -> pd.DataFrame:
        return self._stacked("metrics")
