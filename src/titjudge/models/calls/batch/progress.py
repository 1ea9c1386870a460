"""What a run's batch jobs did, per model, and the progress line written while they run
(`models.calls.batch.collect`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelStats:
    """What one model's batch jobs did in this run, counted as the provider counts them: every
    job this run drove at the provider (created here, or created by a killed run and resumed
    here), the lines (requests) in them, and of those the lines the provider answered and
    failed (a line a job never ran is sent again in a later job, counted there; one given up
    on after the last job is failed). Calls that never went into a job (refused by the budget,
    too large for a file, a model that cannot be built) are failure records, not lines."""

    jobs: int = 0
    #: of `jobs`, those a killed run had created that this run resumed
    resumed: int = 0
    requests: int = 0
    answered: int = 0
    failed: int = 0
    #: the jobs this run made (their local ids), and those already counted
    _made: set[str] = field(default_factory=set, repr=False)
    _counted: set[str] = field(default_factory=set, repr=False)

    def made(self, local: str) -> None:
        """This run made the ledger's job `local` (a killed run's jobs are not made here)."""
        self._made.add(local)

    def driven(self, local: str, lines: int) -> None:
        """The job `local`, of `lines` requests, is at the provider and driven by this run:
        counted once, as resumed unless this run made it."""
        if local in self._counted:
            return
        self._counted.add(local)
        self.jobs += 1
        self.requests += lines
        self.resumed += local not in self._made

    def to_json(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "resumed": self.resumed,
            "requests": self.requests,
            "answered": self.answered,
            "failed": self.failed,
            "price": "batch (the provider's batch rates; litellm's, else half the list price)",
        }


@dataclass
class BatchProgress:
    """Jobs, requests done and time elapsed, written while waiting (`report` prints)."""

    report: Callable[[str], None] | None = None
    started: float = field(default_factory=time.monotonic)
    stats: dict[str, ModelStats] = field(default_factory=dict)
    _open: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def waiting(self, model: str, jobs: int, done: int, total: int) -> None:
        self._open[model] = (jobs, done, total)
        if self.report is None or not jobs:
            return
        jobs_n = sum(j for j, _, _ in self._open.values())
        done_n = sum(d for _, d, _ in self._open.values())
        total_n = sum(t for _, _, t in self._open.values())
        elapsed = int(time.monotonic() - self.started)
        self.report(
            f"batch: {jobs_n} job{'s' if jobs_n != 1 else ''} open, {done_n}/{total_n} "
            f"requests done, {elapsed // 60}:{elapsed % 60:02d} elapsed"
        )


__all__ = ["BatchProgress", "ModelStats"]
