"""What the `batch: true` tests (tests/agents/test_batch*.py) share: writing a run config,
reading the run's record, waiting on a `titjudge run` child process, and reading or
rewriting the batch ledger in the cache dir (`models.calls.batch_ledger`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli_process import CliProcess
from run_dirs import latest_run


def write_config(config: dict[str, Any], tmp_path: Path) -> str:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    return str(path)


def run_dir(tmp_path: Path) -> Path:
    """The latest run of the `e2e` config under `tmp_path/runs`."""
    return latest_run(tmp_path / "runs" / "e2e")


def summary(tmp_path: Path) -> dict[str, Any]:
    return json.loads((run_dir(tmp_path) / "summary.json").read_text())


def wait_for(predicate: Callable[[], bool], proc: CliProcess, timeout: float = 60.0) -> None:
    """Until `predicate()` holds, while the run `proc` is still going."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "the double never saw it"
        time.sleep(0.02)


def ledger_text(directory: Path) -> str:
    return "".join(p.read_text() for p in directory.glob("*.json")) if directory.exists() else ""


def forget_job_id(directory: Path) -> None:
    """The ledger as a run killed while creating its job leaves it: the job's id unknown."""
    (path,) = directory.glob("*.json")
    raw = json.loads(path.read_text())
    for job in raw["jobs"]:
        job["state"], job["job_id"] = "creating", None
    path.write_text(json.dumps(raw))
