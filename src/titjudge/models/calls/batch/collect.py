"""Batch mode: the cache misses of `batch: true` models, answered by the provider's batch jobs.

A run's batch phase (`agents.batch_phase`) runs the run's own steps with a `BatchProbe`: the
calls answer from the cache, and each miss of a `batch: true` text model is queued with the
function that would compute it. `collect` then drives, per model, rounds of jobs:

1. each queued call is computed with the job's answers (`item.compute(answers)`, passed down
   to its send): its send finds the reply to its body there (validated, re-asked, cached exactly as online, under the same
   key) or raises `Deferred` with the body, built by the backend from the request the online
   call sends (`BatchAPI.body`);
2. the deferred bodies go into jobs (split at the provider's limits), recorded in the model's
   ledger (`batch.ledger`) before and after each step; jobs left by a killed run are resumed
   first and a body already in a job is never sent again;
3. the jobs are polled every `batch_poll` seconds until they end; a line the provider failed
   is a failure record with its reason; lines a job never ran (expired, cancelled, a job that
   failed) are sent again in a new job, up to `MAX_JOB_ATTEMPTS` jobs in all.

One run at a time drives a model's ledger: it holds a claim on it in the cache
(`CallCache.claim`, freed at once when its holder dies); a second run sharing the cache dir
waits for it, then leaves to the cache what the first one answered.

The jobs themselves are driven by `calls.batch_jobs`, the budget over their lines is
`calls.batch_spend`, and what they did is counted by `calls.batch_progress`.

A re-ask (an invalid structured reply) is deferred by the second pass of step 1 and goes into
the next round. Each answer (and failure) is handed to the call that asks for it later in the
run (`CallPipeline.answers`, `models.calls.sharing.run_answers`), so it is counted once, at the batch price.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from titjudge.models.calls.batch.jobs import BatchSender, line_answers, run_jobs
from titjudge.models.calls.batch.ledger import Ledger
from titjudge.models.calls.batch.progress import BatchProgress, ModelStats
from titjudge.models.calls.batch_answers import Answer, Deferred
from titjudge.models.calls.batch_spend import BatchSpend, Wanted
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.calls.pipeline import CallPipeline
from titjudge.models.calls.probe import CacheProbe, ComputeOne
from titjudge.models.calls.text_client import ModelClient
from titjudge.models.core.base import MissingCredentialsError
from titjudge.models.core.batch import BatchAPI
from titjudge.records.calls import CallResult

#: rounds of jobs per model in one collection: the requests, their re-asks, and a spare
MAX_ROUNDS = 3
#: how long one run's hold on a model's ledger lasts without being released (a run killed
#: on this host frees it at once; one on another host sharing the cache dir, after this)
LEDGER_CLAIM_TTL = 48 * 3600.0


@dataclass
class Queued:
    client: CallPipeline[Any]
    key: str
    compute: ComputeOne


class BatchProbe(CacheProbe):
    """Answers from the cache; queues each miss of a `batch: true` text model (see above).
    Images are fitted to key the calls, so each line carries what the online call would."""

    fits = True

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


async def collect(queued: list[Queued], progress: BatchProgress) -> None:
    """Answer every queued call through its model's batch jobs (see the module's notes).

    Each client (a model with one set of options: two judges on one model with different
    params are two) is collected on its own, as its backend builds its own bodies; clients
    that share a ledger (one model at one endpoint) take turns, the others run at once."""
    by_client: dict[int, list[Queued]] = {}
    for item in queued:
        by_client.setdefault(id(item.client), []).append(item)
    by_ledger: dict[str, list[list[Queued]]] = {}
    for items in by_client.values():
        by_ledger.setdefault(_ledger_name(items[0].client), []).append(items)

    async def in_turn(groups: list[list[Queued]]) -> None:
        for items in groups:
            await _collect_model(items, progress)

    await asyncio.gather(*(in_turn(groups) for groups in by_ledger.values()))


def _ledger_name(client: CallPipeline[Any]) -> str:
    """One ledger per model and endpoint (what a killed run's re-run finds again)."""
    return f"{client.model} {client.options.api_base or ''}"


async def _collect_model(queued: list[Queued], progress: BatchProgress) -> None:
    client = queued[0].client
    progress.stats.setdefault(client.model, ModelStats())
    try:
        await client.backend.ready()
    except MissingCredentialsError:
        raise
    except Exception as exc:  # the model cannot be built: each of its calls fails so
        for item in queued:
            client.answers.keep_batch(item.key, client.failure(exc))
        return
    api: BatchAPI | None = client.backend.batch_api()  # type: ignore[attr-defined]
    if api is None:
        for item in queued:
            client.answers.keep_batch(
                item.key,
                CallResult(
                    ok=False, error=f"{client.model}: its provider has no batch API", attempts=0
                ),
            )
        return
    directory = client.cache.directory if client.backend.cacheable else None
    name = _ledger_name(client)
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
    progress.stats.setdefault(client.model, ModelStats())  # listed even when no job is needed
    left = list(queued)
    stuck: dict[str, str] = {}
    send = BatchSender(client)
    spend = BatchSpend(client.budget)
    for _ in range(MAX_ROUNDS + 1):
        answers = line_answers(api, ledger)
        for sha, reason in stuck.items():  # not kept in the ledger: a re-run resumes the job
            answers.setdefault(sha, Answer(None, reason))
        for sha, reason in spend.refused.items():  # never sent: the budget could not cover it
            answers.setdefault(sha, Answer(None, reason))
        wanted: dict[str, Wanted] = {}
        still: list[Queued] = []
        for item in left:
            try:
                ((result, entry),) = await item.compute(answers)
            except Deferred as deferred:
                found = wanted.setdefault(
                    deferred.sha, Wanted(deferred.body, deferred.worst_usd, deferred.made_for)
                )
                found.keys.append(item.key)
                spend.asked(item.key, deferred.sha)
                still.append(item)
                continue
            if result.ok and entry is not None and client.backend.cacheable:
                client.cache.set(item.key, entry, client.model)
            client.answers.keep_batch(item.key, result)
            spend.answered(item.key, result)
        left = still
        if not left:
            break
        stuck = await run_jobs(api, ledger, spend.cover(wanted), send, progress, client.model)
    for item in left:  # rounds spent (a reply that keeps asking for more): a failure
        client.answers.keep_batch(
            item.key,
            CallResult(ok=False, error="batch: no answer after the re-ask rounds", attempts=0),
        )
    spend.close()
    ledger.clear()


__all__ = ["BatchProbe", "Queued", "collect"]
