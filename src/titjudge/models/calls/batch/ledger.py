"""The batch ledger: one model's batch jobs, kept in the cache dir so that a run killed at
any point and run again resumes its jobs and never submits a request twice.

One JSON file per model and endpoint (`<cache dir>/batches/<id>.json`), written atomically
(`titjudge.files.atomic_write`) at every step of a job: before its input file is uploaded
(`new`, with each line's custom_id, the body it stands for and the cache keys waiting on it),
once uploaded (`uploaded`), just before the job is created (`creating`: a run killed then
looks the job up by its metadata before creating it again), once created (`submitted`, the
provider's job id), and once its results are read (`done`: its rows, as the provider wrote
them, in `<id>-<job>.jsonl` beside it, kept until the batch phase has used them; then every
file of the model is removed).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.files import atomic_write, jsonl_lines


@dataclass
class Job:
    """One batch job: its local id (the job's metadata), its state, the provider's ids, and
    its lines: custom_id -> {"sha": body hash, "keys": [cache keys]}."""

    local: str
    state: str = "new"
    lines: dict[str, dict[str, Any]] = field(default_factory=dict)
    file_id: str | None = None
    job_id: str | None = None
    status: str | None = None
    #: how many jobs before this one carried the same lines unfinished (expired, failed)
    attempt: int = 1
    #: when the job's creation was asked (unix time): a killed run looks for a job created
    #: since then where the provider keeps no tag (`BatchAPI.find`)
    creating_at: float | None = None
    #: creations asked in this run (not kept: a re-run tries afresh, `find` first)
    creates: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "local": self.local,
            "state": self.state,
            "lines": self.lines,
            "file_id": self.file_id,
            "job_id": self.job_id,
            "status": self.status,
            "attempt": self.attempt,
            "creating_at": self.creating_at,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Job:
        fields: dict[str, Any] = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        return cls(**fields)


class Ledger:
    """The jobs and answered rows of one model (see the module's notes)."""

    def __init__(self, directory: Path | None, model: str):
        name = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
        self.path = directory / "batches" / f"{name}.json" if directory is not None else None
        self.model = model
        self.jobs: list[Job] = []
        #: custom_id -> the provider's row (output or error file)
        self.rows: dict[str, dict[str, Any]] = {}
        if self.path is not None and self.path.exists():
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            self.jobs = [Job.from_json(j) for j in raw.get("jobs", [])]
            for job in self.jobs:
                found = self._rows_path(job)
                if job.state == "done" and found is not None and found.exists():
                    for line in jsonl_lines(found.read_text(encoding="utf-8")):
                        row = json.loads(line)
                        self.rows[str(row.get("custom_id"))] = row

    def _rows_path(self, job: Job) -> Path | None:
        return (
            None
            if self.path is None
            else self.path.with_name(f"{self.path.stem}-{job.local}.jsonl")
        )

    def save_rows(self, job: Job, cids: list[str]) -> None:
        """The rows of `job`'s lines `cids` (its answers and failures), before it is `done`."""
        path = self._rows_path(job)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(self.rows[cid], ensure_ascii=False) + "\n" for cid in cids)
        atomic_write(path, text)

    def new_job(self, lines: dict[str, dict[str, Any]], attempt: int = 1) -> Job:
        job = Job(local=f"titjudge-{uuid.uuid4().hex[:20]}", lines=lines, attempt=attempt)
        self.jobs.append(job)
        self.save()
        return job

    def open_jobs(self) -> list[Job]:
        return [job for job in self.jobs if job.state != "done"]

    def pending_shas(self) -> set[str]:
        """Bodies in a job not yet done (never sent again meanwhile)."""
        return {line["sha"] for job in self.open_jobs() for line in job.lines.values()}

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"model": self.model, "jobs": [job.to_json() for job in self.jobs]}
        atomic_write(self.path, json.dumps(data, ensure_ascii=False))

    def clear(self) -> None:
        """Every job done and its rows used: the ledger is removed."""
        if self.open_jobs():
            return
        for job in self.jobs:
            found = self._rows_path(job)
            if found is not None and found.exists():
                found.unlink()
        self.jobs, self.rows = [], {}
        if self.path is not None and self.path.exists():
            self.path.unlink()


__all__ = ["Job", "Ledger"]
