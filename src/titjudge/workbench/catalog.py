"""The runs a workbench shows: every run dir under a folder, found once, each read when first
asked for and kept.

A run dir is a folder holding items.jsonl (what `titjudge run` writes); an ablation grid's
rows are run dirs under `<grid>/rows/`, so they are found like any other. A folder whose name
ends in `.partial` (a run's staging dir, `.<run id>.partial`) is a run still in progress (or
one that died): it is listed as such, with its live record (`report.live`: live.json, the
newest under it, a grid's row's) and nothing else read from it. `refresh` looks again (the
runs page asks on every visit and while a run is in progress): a run that finished appears,
its staging dir goes. Each run is known to the app by a short id (`r1`, `r2`, ... in the
order they were found), never by a path a request names, so a request can reach no file but
the runs' own; an id, once given, stays the run's while the app lasts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.errors import DataError
from titjudge.records.items import HumanPair
from titjudge.records.run_record import RunRecord
from titjudge.report.audit.data import AuditData, AuditPair

#: folders never walked into: a run's own folders of files, caches, virtualenvs
SKIPPED = frozenset({"cache", ".git", ".venv", "node_modules", "images", "__pycache__"})
PARTIAL = ".partial"


def pair_key(pair: HumanPair) -> str:
    """The pair's key in every run: its prompt and its two images in sorted order."""
    first, second = sorted((pair.item_a, pair.item_b))
    return f"{pair.prompt_id}|{first}|{second}"


@dataclass
class RunRef:
    """One run the workbench shows: its id, where it is, and what was read of it."""

    id: str
    path: Path
    #: its path relative to the workbench's folder, as the pages name it
    label: str
    in_progress: bool = False
    #: why the run could not be read (a one-line DataError), once it was tried
    problem: str | None = None
    _record: RunRecord | None = field(default=None, repr=False)
    _audit: AuditData | None = field(default=None, repr=False)
    _by_key: dict[str, AuditPair] | None = field(default=None, repr=False)
    #: the items view's rows (`items.item_rows`), built once
    item_rows: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def live(self) -> dict[str, Any] | None:
        """A run in progress: its newest live.json (None for a finished run, or one that
        writes none: an old titjudge's, or one killed outright)."""
        if not self.in_progress:
            return None
        from titjudge.report.live import LIVE_FILE, read_live

        found = [p for p in self.path.glob(f"**/{LIVE_FILE}") if p.is_file()]
        if not found:
            return None
        try:
            newest = max(found, key=lambda p: p.stat().st_mtime)
        except OSError:  # replaced while looked at
            return None
        return read_live(newest)

    @property
    def record(self) -> RunRecord:
        """metrics.json, summary.json, files.json and the pairwise verdicts (`load_run`)."""
        if self._record is None:
            from titjudge.report.record import load_run

            self._record = load_run(self.path)
        return self._record

    @property
    def audit(self) -> AuditData:
        """The run's pairs joined with every variant's scores and rationales (`load_audit`),
        from the same record."""
        if self._audit is None:
            from titjudge.report.audit.load import load_audit

            self._audit = load_audit(self.path)
        return self._audit

    @property
    def by_key(self) -> dict[str, AuditPair]:
        """The run's audited pairs by `pair_key`."""
        if self._by_key is None:
            self._by_key = {pair_key(p.pair): p for p in self.audit.pairs}
        return self._by_key


@dataclass
class Catalog:
    """Every run under `root`, in the order of their paths."""

    root: Path
    runs: list[RunRef]
    #: the pairs view's rows per choice of runs and judge kind, built once (`views.pair_rows`)
    rows: dict[tuple[tuple[str, ...], str | None], list[dict[str, Any]]] = field(
        default_factory=dict, repr=False
    )
    #: ids of runs in progress that have since left (their ids are never given again)
    gone: list[str] = field(default_factory=list, repr=False)
    by_id: dict[str, RunRef] = field(default_factory=dict, repr=False)

    @classmethod
    def find(cls, root: Path) -> Catalog:
        """The runs under `root` (a run dir itself, a name dir of runs, a `run.out` folder,
        an ablation grid); a folder with none is one DataError."""
        if not root.exists():
            raise DataError(f"{root}: not found")
        if not root.is_dir():
            raise DataError(f"{root}: expected a folder of runs, found a file")
        found = sorted(_run_dirs(root))
        if not found:
            raise DataError(
                f"{root}: no run under it (a run dir holds items.jsonl; make one with "
                "`titjudge run`)"
            )
        catalog = cls(root, [])
        catalog._add(found)
        return catalog

    def _add(self, paths: list[Path]) -> None:
        for path in paths:
            label = path.relative_to(self.root).as_posix() if path != self.root else self.root.name
            number = len(self.runs) + len(self.gone) + 1
            self.runs.append(RunRef(f"r{number}", path, label, path.name.endswith(PARTIAL)))
        self.by_id = {run.id: run for run in self.runs}

    def refresh(self) -> None:
        """Look under the root again: new runs get the next ids, a staging dir that is gone
        (its run finished, or failed and was removed) leaves the list."""
        found = sorted(_run_dirs(self.root)) if self.root.is_dir() else []
        known = {run.path for run in self.runs}
        still = set(found)
        for run in [r for r in self.runs if r.in_progress and r.path not in still]:
            self.runs.remove(run)
            self.gone.append(run.id)
        self._add([path for path in found if path not in known])
        self.runs.sort(key=lambda run: int(run.id[1:]))
        self.by_id = {run.id: run for run in self.runs}

    def get(self, run_id: str) -> RunRef:
        """The run of this id; an unknown id is a DataError (the API's 404)."""
        found = self.by_id.get(run_id)
        if found is None:
            raise DataError(f"no run {run_id!r} here")
        return found

    def readable(self, run_id: str) -> RunRef:
        """The run of this id, finished and readable, or a DataError saying why not."""
        run = self.get(run_id)
        if run.in_progress:
            raise DataError(f"{run.label}: still in progress")
        if run.problem is not None:
            raise DataError(run.problem)
        try:
            run.record  # noqa: B018 - read it now, so a broken run is one line
        except DataError as exc:
            run.problem = str(exc)
            raise
        return run


def _run_dirs(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if "items.jsonl" in files or here.name.endswith(PARTIAL):
            found.append(here)
            dirs[:] = []  # a run's own folders hold no other run
            continue
        # a staging dir is hidden (`.<run id>.partial`): the one hidden folder walked into
        dirs[:] = sorted(
            d for d in dirs if d not in SKIPPED and (not d.startswith(".") or d.endswith(PARTIAL))
        )
    return found


__all__ = ["Catalog", "RunRef", "pair_key"]
