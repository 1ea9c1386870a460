"""One model's batch jobs (`models.calls.batch.collect`): bodies split into jobs at the provider's
limits, each job driven step by step through its ledger (`calls.batch_ledger`) with the
model's retries, its rows read back as answers or failures."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from titjudge.models.calls.batch.ledger import Job, Ledger
from titjudge.models.calls.batch.progress import BatchProgress, ModelStats
from titjudge.models.calls.batch_answers import Answer
from titjudge.models.calls.batch_spend import Wanted
from titjudge.models.calls.pipeline import CallPipeline
from titjudge.models.core.base import TransientError
from titjudge.models.core.batch import BatchAPI, LineResult
from titjudge.safety import redact

T = TypeVar("T")

#: jobs that may carry one request (the first and two more after an expiry or a failure)
MAX_JOB_ATTEMPTS = 3
#: an input file is kept under this share of the provider's byte limit
BYTES_MARGIN = 0.95


def line_answers(api: BatchAPI, ledger: Ledger) -> dict[str, Answer]:
    """The replies and failures the ledger holds, by body hash; lines never run are left out."""
    shas = {cid: line["sha"] for job in ledger.jobs for cid, line in job.lines.items()}
    answers: dict[str, Answer] = {}
    for cid, row in ledger.rows.items():
        sha = shas.get(cid)
        if sha is None:
            continue
        parsed = _parse(api, row)
        if not parsed.unfinished:
            answers[sha] = Answer(parsed.generation, parsed.error, parsed.embedded)
    return answers


async def run_jobs(
    api: BatchAPI,
    ledger: Ledger,
    wanted: dict[str, Wanted],
    send: BatchSender,
    progress: BatchProgress,
    model: str,
) -> dict[str, str]:
    """Put every wanted body not already in a job into new jobs, then drive every open job
    (a killed run's first) until all have ended. A job the provider's API cannot be reached
    for (after the model's retries) stays in the ledger as it is, for a re-run to resume; its
    bodies' reasons are returned."""
    stats = progress.stats.setdefault(model, ModelStats())
    bodies = {sha: want.body for sha, want in wanted.items()}
    busy = ledger.pending_shas()
    fresh = [sha for sha in wanted if sha not in busy]
    for chunk in _split(api, [(sha, bodies[sha]) for sha in fresh], ledger):
        lines = {_custom_id(sha): {"sha": sha, "keys": wanted[sha].keys} for sha in chunk}
        stats.made(ledger.new_job(lines).local)
    stuck: dict[str, str] = {}
    while True:
        jobs = [job for job in ledger.open_jobs() if job.local not in stuck]
        if not jobs:
            break
        for job in jobs:
            try:
                await _advance(api, ledger, job, bodies, stats, send)
            except Unreachable as exc:
                stuck[job.local] = (
                    f"batch job {job.job_id or job.local} ({job.state}): {exc}; the job is "
                    "kept in the cache dir: run again to resume it"
                )
        still = [job for job in ledger.open_jobs() if job.local not in stuck]
        total = sum(len(job.lines) for job in still)
        done = sum(1 for job in still for cid in job.lines if cid in ledger.rows)
        progress.waiting(model, len(still), done, total)
        if still:
            await asyncio.sleep(send.poll)
    progress.waiting(model, 0, 0, 0)
    return {
        line["sha"]: stuck[job.local]
        for job in ledger.open_jobs()
        if job.local in stuck
        for line in job.lines.values()
    }


class Unreachable(Exception):
    """The provider's batch API failed a step after the model's retries."""

    #: a later try may succeed (a 5xx, a timeout, a lost reply)
    transient = False


class BatchSender:
    """One step against the provider's batch API, retried on transient errors with the
    model's `max_attempts` and backoff; a failure after them is `Unreachable`."""

    def __init__(self, client: CallPipeline[Any]):
        self.client = client
        self.poll = client.options.batch_poll
        #: tries of a step, the model's `max_attempts`
        self.attempts = client.options.max_attempts

    async def __call__(self, step: Callable[[], Awaitable[T]]) -> T:
        options = self.client.options
        for attempt in range(1, options.max_attempts + 1):
            try:
                return await step()
            except Exception as exc:
                mapped = self.client.backend.classify_error(exc)
                if isinstance(mapped, TransientError) and attempt < options.max_attempts:
                    wait = options.backoff_initial * 2 ** (attempt - 1)
                    await asyncio.sleep(min(wait, options.backoff_max))
                    continue
                raise Unreachable(redact(f"{type(mapped).__name__}: {mapped}")) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    async def once(self, step: Callable[[], Awaitable[T]]) -> T:
        """One try of a step that must not be repeated blindly (creating a job: its reply
        may be lost after the provider made it); a failure is `Unreachable`, `transient`
        when the provider may answer a later try."""
        try:
            return await step()
        except Exception as exc:
            mapped = self.client.backend.classify_error(exc)
            failure = Unreachable(redact(f"{type(mapped).__name__}: {mapped}"))
            failure.transient = isinstance(mapped, TransientError)
            raise failure from exc


def _split(
    api: BatchAPI, lines: list[tuple[str, dict[str, Any]]], ledger: Ledger
) -> list[list[str]]:
    """Bodies in chunks within the provider's limits on requests and bytes per file; a body
    too large for any file is a failed line at once."""
    budget = int(api.max_bytes * BYTES_MARGIN)
    chunks: list[list[str]] = []
    current: list[str] = []
    size = 0
    for sha, body in lines:
        n = len(_line_bytes(api, sha, body))
        if n > budget:
            ledger.rows[_custom_id(sha)] = _failed_row(
                sha, "too_large", f"the request is {n} bytes, over the batch file limit"
            )
            continue
        if current and (len(current) >= api.max_requests or size + n > budget):
            chunks.append(current)
            current, size = [], 0
        current.append(sha)
        size += n
    if current:
        chunks.append(current)
    return chunks


async def _advance(
    api: BatchAPI,
    ledger: Ledger,
    job: Job,
    bodies: dict[str, dict[str, Any]],
    stats: ModelStats,
    send: BatchSender,
) -> None:
    """One step of `job`, each recorded in the ledger before the next is taken."""
    if job.state == "new":
        job.lines = {cid: line for cid, line in job.lines.items() if line["sha"] in bodies}
        if not job.lines:  # a killed run's lines no run wants now
            job.state = "done"
            ledger.save()
            return
        if api.uploads:
            data = _job_bytes(api, job, bodies)
            job.file_id = await send(lambda: api.upload(data, f"{job.local}.jsonl"))
        job.state = "uploaded"
        ledger.save()
    if job.state in ("uploaded", "creating"):
        tag = {"titjudge_job": job.local}
        found = None
        if job.state == "creating":
            since, count = job.creating_at or 0.0, len(job.lines)
            found = await send(lambda: api.find(tag, since, count))
        if found is None:
            if not api.uploads:  # the lines go with the job: those a run still wants
                job.lines = {c: line for c, line in job.lines.items() if line["sha"] in bodies}
                if not job.lines:
                    job.state = "done"
                    ledger.save()
                    return
            data = b"" if api.uploads else _job_bytes(api, job, bodies)
            job.state, job.creating_at = "creating", time.time()
            job.creates += 1
            ledger.save()
            file_id = job.file_id
            stats.made(job.local)  # what the provider makes now is this run's, not resumed
            try:  # never retried in place: a lost reply may hide a job the provider made
                found = await send.once(lambda: api.create(file_id, data, tag))
            except Unreachable as exc:
                if exc.transient and job.creates < send.attempts:
                    return  # still "creating": the next look asks `find` before creating
                raise
        job.job_id, job.state = found, "submitted"
        ledger.save()
        stats.driven(job.local, len(job.lines))  # created now, or found: a killed run's
        return
    if job.state != "submitted" or job.job_id is None:
        return
    stats.driven(job.local, len(job.lines))  # a killed run's job, resumed: counted once
    job_id = job.job_id
    state = await send(lambda: api.retrieve(job_id))
    job.status = state.status
    if not state.done:
        return
    for row in await send(lambda: api.results(state)):
        cid = str(row.get("custom_id"))
        if cid in job.lines:
            ledger.rows[cid] = row
    unfinished = [
        cid
        for cid in job.lines
        if cid not in ledger.rows or _parse(api, ledger.rows[cid]).unfinished
    ]
    why = f"the batch job {state.status}" + (f" ({state.errors})" if state.errors else "")
    # a job the provider failed with its own errors (OpenAI's and Azure's validation of the
    # file, `errors.data`) fails the same way again: its lines are failures at once
    refused = state.status == "failed" and bool(state.errors)
    again = unfinished if job.attempt < MAX_JOB_ATTEMPTS and not refused else []
    for cid in unfinished:
        if again:
            ledger.rows.pop(cid, None)
        else:
            ledger.rows[cid] = _failed_row(
                job.lines[cid]["sha"],
                f"gave_up_{state.status}",
                why if refused else f"{why} {job.attempt} times",
            )
    ended = [cid for cid in job.lines if cid in ledger.rows]
    ledger.save_rows(job, ended)
    outcomes = [_parse(api, ledger.rows[cid]) for cid in ended]
    stats.answered += sum(1 for line in outcomes if line.error is None)
    stats.failed += sum(1 for line in outcomes if line.error is not None)
    job.state = "done"  # saved with the job that sends its unfinished lines again, at once
    if again:
        retry = ledger.new_job({cid: job.lines[cid] for cid in again}, attempt=job.attempt + 1)
        stats.made(retry.local)
    else:
        ledger.save()


def _job_bytes(api: BatchAPI, job: Job, bodies: dict[str, dict[str, Any]]) -> bytes:
    return b"".join(
        _line_bytes(api, line["sha"], bodies[line["sha"]]) for line in job.lines.values()
    )


def _custom_id(sha: str) -> str:
    """A line's custom_id: its body's hash (a body is one line, whichever keys wait on it)."""
    return f"tj-{sha[:48]}"


def _line_bytes(api: BatchAPI, sha: str, body: dict[str, Any]) -> bytes:
    line = api.line(_custom_id(sha), body)
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _failed_row(sha: str, code: str, message: str) -> dict[str, Any]:
    """A row for a line titjudge gave up on itself (read by `_parse`, whatever the provider)."""
    return {"custom_id": _custom_id(sha), "titjudge_failed": {"code": code, "message": message}}


def _parse(api: BatchAPI, row: dict[str, Any]) -> LineResult:
    """A row as the provider's adapter reads it, or one titjudge wrote itself (`_failed_row`)."""
    mine = row.get("titjudge_failed")
    if isinstance(mine, dict):
        reason = f"batch line failed: {mine.get('code')}: {mine.get('message')}"
        return LineResult(str(row.get("custom_id")), error=reason)
    return api.parse(row)


__all__ = ["MAX_JOB_ATTEMPTS", "BatchSender", "Unreachable", "line_answers", "run_jobs"]
