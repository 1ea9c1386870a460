"""Batch mode: the cache misses of `batch: true` models, answered by the provider's batch jobs.

A run's batch phase (`agents.batch_phase`) runs the run's own steps under a `BatchProbe`: the
calls answer from the cache, and each miss of a `batch: true` text model is queued with the
function that would compute it. `collect` then drives, per model, rounds of jobs:

1. each queued call is computed under `batch_answers.answering(answers)`: its send finds the
   reply to its body there (validated, re-asked, cached exactly as online, under the same
   key) or raises `Deferred` with the body, built by the backend from the request the online
   call sends (`BatchAPI.body`);
2. the deferred bodies go into jobs (split at the provider's limits), recorded in the model's
   ledger (`batch_ledger`) before and after each step; jobs left by a killed run are resumed
   first and a body already in a job is never sent again;
3. the jobs are polled every `batch_poll` seconds until they end; a line the provider failed
   is a failure record with its reason; lines a job never ran (expired, cancelled, a job that
   failed) are sent again in a new job, up to `MAX_JOB_ATTEMPTS` jobs in all.

One run at a time drives a model's ledger: it holds a claim on it in the cache
(`CallCache.claim`, freed at once when its holder dies); a second run sharing the cache dir
waits for it, then leaves to the cache what the first one answered.

A re-ask (an invalid structured reply) is deferred by the second pass of step 1 and goes into
the next round. Each answer (and failure) is handed to the call that asks for it later in the
run (`CallPipeline.batch_answers`), so it is counted once, at the batch price.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from titjudge.models.calls.batch_answers import Answer, Deferred, answering
from titjudge.models.calls.batch_ledger import Job, Ledger
from titjudge.models.calls.budget import Budget, OverBudgetError
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.calls.pipeline import CacheProbe, CallPipeline, ComputeOne
from titjudge.models.calls.results import CallResult
from titjudge.models.calls.text_client import ModelClient
from titjudge.models.core.base import MissingCredentialsError, TransientError
from titjudge.models.core.batch import BatchAPI, LineResult
from titjudge.safety import redact

T = TypeVar("T")

#: jobs that may carry one request (the first and two more after an expiry or a failure)
MAX_JOB_ATTEMPTS = 3
#: rounds of jobs per model in one collection: the requests, their re-asks, and a spare
MAX_ROUNDS = 3
#: an input file is kept under this share of the provider's byte limit
BYTES_MARGIN = 0.95
#: how long one run's hold on a model's ledger lasts without being released (a run killed
#: on this host frees it at once; one on another host sharing the cache dir, after this)
LEDGER_CLAIM_TTL = 48 * 3600.0


@dataclass
class Queued:
    client: CallPipeline[Any]
    key: str
    compute: ComputeOne


class BatchProbe(CacheProbe):
    """Answers from the cache; queues each miss of a `batch: true` text model (see above)."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: dict[tuple[str, str], Queued] = {}

    def holds(self, client: CallPipeline[Any]) -> bool:
        """A `batch: true` model's text, structured and embedding calls (each text of an
        embedding call one line); the other models' calls are made as usual meanwhile (a
        describer without `batch` describes, so a batch judge gets its descriptions in this
        run, not online in the graph) and handed to the graph, counted there once."""
        return client.options.batch and isinstance(client, ModelClient | EmbeddingClient)

    def miss(
        self, client: CallPipeline[Any], key: str, compute: ComputeOne | None = None
    ) -> CallResult[Any]:
        if compute is not None and self.holds(client):
            self.queued.setdefault((client.model, key), Queued(client, key, compute))
        return super().miss(client, key, compute)


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


async def collect(queued: list[Queued], progress: BatchProgress) -> None:
    """Answer every queued call through its model's batch jobs (see the module's notes)."""
    by_model: dict[str, list[Queued]] = {}
    for item in queued:
        by_model.setdefault(item.client.model, []).append(item)
    await asyncio.gather(*(_collect_model(items, progress) for items in by_model.values()))


async def _collect_model(queued: list[Queued], progress: BatchProgress) -> None:
    client = queued[0].client
    progress.stats.setdefault(client.model, ModelStats())
    try:
        await client.backend.ready()
    except MissingCredentialsError:
        raise
    except Exception as exc:  # the model cannot be built: each of its calls fails so
        for item in queued:
            client.batch_answers[item.key] = client._failure(exc)
        return
    api: BatchAPI | None = client.backend.batch_api()  # type: ignore[attr-defined]
    if api is None:
        for item in queued:
            client.batch_answers[item.key] = CallResult(
                ok=False, error=f"{client.model}: its provider has no batch API", attempts=0
            )
        return
    directory = client.cache.directory if client.backend.cacheable else None
    name = f"{client.model} {client.options.api_base or ''}"
    if directory is None:
        await _collect_ledger(client, api, Ledger(None, name), queued, progress)
        return
    lock = f"batch-ledger:{name}"
    said = False
    while not client.cache.claim(lock, LEDGER_CLAIM_TTL):  # another run drives these jobs
        if not said and progress.report is not None:
            progress.report(f"batch: another run holds {client.model}'s batch jobs; waiting")
        said = True
        await asyncio.sleep(client.options.batch_poll)
    try:
        if said:  # what the other run answered is cached now: the graph reads it there
            queued = [item for item in queued if client.cache.peek(item.key) is None]
        await _collect_ledger(client, api, Ledger(directory, name), queued, progress)
    finally:
        client.cache.release(lock)


async def _collect_ledger(
    client: CallPipeline[Any],
    api: BatchAPI,
    ledger: Ledger,
    queued: list[Queued],
    progress: BatchProgress,
) -> None:
    """Rounds of jobs for one model's queued calls, under its ledger (held by this run)."""
    stats = progress.stats.setdefault(client.model, ModelStats())
    left = list(queued)
    stuck: dict[str, str] = {}
    send = _Sender(client)
    spend = _Spend(client.budget)
    for _ in range(MAX_ROUNDS + 1):
        answers = _answers(api, ledger)
        for sha, reason in stuck.items():  # not kept in the ledger: a re-run resumes the job
            answers.setdefault(sha, Answer(None, reason))
        for sha, reason in spend.refused.items():  # never sent: the budget could not cover it
            answers.setdefault(sha, Answer(None, reason))
        wanted: dict[str, Wanted] = {}
        still: list[Queued] = []
        for item in left:
            try:
                with answering(answers):
                    ((result, entry),) = await item.compute()
            except Deferred as deferred:
                found = wanted.setdefault(deferred.sha, Wanted(deferred.body, deferred.worst_usd))
                found.keys.append(item.key)
                spend.asked(item.key, deferred.sha)
                still.append(item)
                continue
            if result.ok and entry is not None and client.backend.cacheable:
                client.cache.set(item.key, entry, client.model)
            client.batch_answers[item.key] = result
            spend.answered(item.key, result)
            stats.answered += int(result.ok)
            stats.failed += int(not result.ok)
        left = still
        if not left:
            break
        stuck = await _run_jobs(api, ledger, spend.cover(wanted), send, progress, client.model)
    for item in left:  # rounds spent (a reply that keeps asking for more): a failure
        client.batch_answers[item.key] = CallResult(
            ok=False, error="batch: no answer after the re-ask rounds", attempts=0
        )
        stats.failed += 1
    spend.close()
    ledger.clear()


@dataclass
class Wanted:
    """A body to send as a batch line: its worst case at the batch price, and the cache keys
    waiting on it."""

    body: dict[str, Any]
    worst: float
    keys: list[str] = field(default_factory=list)


class _Spend:
    """`run.budget_usd` over one model's batch lines: each line's worst case is reserved
    before it goes into a job (a line the budget cannot cover is not sent: the calls waiting
    on it fail as refused by the budget, as online calls would), and settles to what the
    calls that read its answer cost (two rounds of a re-asked call settle together)."""

    def __init__(self, budget: Budget | None):
        self.budget = budget
        #: body hash -> its reservation
        self.held: dict[str, float] = {}
        #: cache key -> the bodies it was deferred on
        self.shas: dict[str, list[str]] = {}
        #: body hash -> the budget's refusal
        self.refused: dict[str, str] = {}

    def asked(self, key: str, sha: str) -> None:
        self.shas.setdefault(key, []).append(sha)

    def cover(self, wanted: dict[str, Wanted]) -> dict[str, Wanted]:
        """The bodies the budget covers, reserved in order; the rest are refused (their
        calls' answers say so) and every later one with them, as online."""
        if self.budget is None:
            return wanted
        covered: dict[str, Wanted] = {}
        for sha, want in wanted.items():
            if sha in self.refused:
                continue
            if sha in self.held:
                covered[sha] = want
            elif self.budget.hold(want.worst):
                self.held[sha] = max(want.worst, 0.0)
                covered[sha] = want
            else:
                self.refused[sha] = str(OverBudgetError(self.budget))
        return covered

    def answered(self, key: str, result: CallResult[Any]) -> None:
        """A call read its answer: its bodies' reservations settle to what it cost (a body
        sent by a killed run and resumed by this one was never reserved: its cost counts)."""
        if self.budget is None:
            return
        reserved = [self.held.pop(sha) for sha in self.shas.pop(key, []) if sha in self.held]
        cost = result.cost
        if cost is None:  # a reply nothing priced (refused under a budget): its worst case
            cost = sum(reserved) if result.ok else 0.0
        for held in reserved[1:]:
            self.budget.settle(held, 0.0)
        self.budget.settle(reserved[0] if reserved else 0.0, cost)

    def close(self) -> None:
        """Lines still reserved are in jobs left open (a re-run resumes them) or answered for
        calls that asked again: the provider may still charge them, so their worst case stays
        spent."""
        if self.budget is None:
            return
        for held in self.held.values():
            self.budget.settle(held, held)
        self.held.clear()


def _answers(api: BatchAPI, ledger: Ledger) -> dict[str, Answer]:
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


async def _run_jobs(
    api: BatchAPI,
    ledger: Ledger,
    wanted: dict[str, Wanted],
    send: _Sender,
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
        ledger.new_job({_custom_id(sha): {"sha": sha, "keys": wanted[sha].keys} for sha in chunk})
    stuck: dict[str, str] = {}
    while True:
        jobs = [job for job in ledger.open_jobs() if job.local not in stuck]
        if not jobs:
            break
        for job in jobs:
            try:
                await _advance(api, ledger, job, bodies, stats, send)
            except _Unreachable as exc:
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


class _Unreachable(Exception):
    """The provider's batch API failed a step after the model's retries."""


class _Sender:
    """One step against the provider's batch API, retried on transient errors with the
    model's `max_attempts` and backoff; a failure after them is `_Unreachable`."""

    def __init__(self, client: CallPipeline[Any]):
        self.client = client
        self.poll = client.options.batch_poll

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
                raise _Unreachable(redact(f"{type(mapped).__name__}: {mapped}")) from exc
        raise AssertionError("unreachable")  # pragma: no cover


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
    send: _Sender,
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
            ledger.save()
            file_id = job.file_id
            found = await send(lambda: api.create(file_id, data, tag))
            stats.jobs += 1
            stats.requests += len(job.lines)
        job.job_id, job.state = found, "submitted"
        ledger.save()
        return
    if job.state != "submitted" or job.job_id is None:
        return
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
    again = unfinished if job.attempt < MAX_JOB_ATTEMPTS else []
    for cid in unfinished:
        if again:
            ledger.rows.pop(cid, None)
        else:
            ledger.rows[cid] = _failed_row(
                job.lines[cid]["sha"], f"gave_up_{state.status}", f"{why} {job.attempt} times"
            )
    ledger.save_rows(job, [cid for cid in job.lines if cid in ledger.rows])
    job.state = "done"  # saved with the job that sends its unfinished lines again, at once
    if again:
        ledger.new_job({cid: job.lines[cid] for cid in again}, attempt=job.attempt + 1)
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


__all__ = ["BatchProbe", "BatchProgress", "ModelStats", "Queued", "collect"]
