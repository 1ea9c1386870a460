"""What a run's batch jobs did, per model, and the progress line written while they run
(`models.calls.batch.collect`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelStats:
    """What one model's batch jobs did in this run."""

    jobs: int = 0
    requests: int = 0
    answered: int = 0
    failed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
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
