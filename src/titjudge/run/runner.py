"""Run a config end to end: load data, build models, run the graph, write the run dir.

Each run writes a new run dir (`report.runs`: `<run.out>/<name>/<run id>/`, or exactly
`--out`), staged beside its target and moved into place once every file is written, files.json
(each file's size and sha256, `report.run_files`) last; a run that fails or is interrupted
leaves earlier runs as they were and no half run.

Resuming is the cache's job: a re-run of the same config after a crash or Ctrl-C asks
no model again for anything it already answered, and writes the same scores.csv and
metrics.json an uninterrupted run would have written (in a run dir of its own).
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from titjudge.agents.item import RunContext
from titjudge.config.schema import RunConfig
from titjudge.errors import ConfigError
from titjudge.judges.base import Judge
from titjudge.metrics.evaluate import HumanData
from titjudge.models.calls.budget import NOT_SENT_BUDGET
from titjudge.models.calls.provenance import provenance
from titjudge.models.core.clients import SEND
from titjudge.models.hub import ModelHub, usage_since
from titjudge.records import ItemResult, Progress, RunEvaluation, cache_counts
from titjudge.records.calls import Usage
from titjudge.records.items import Item
from titjudge.records.pairs import PairVerdict
from titjudge.records.public_set import PublicSet
from titjudge.records.run_record import RunRecord
from titjudge.records.summary import StoppedModel
from titjudge.report import run_dir, runs
from titjudge.report.live import LiveRecord
from titjudge.report.progress import RECORD_INTERVAL, ProgressDisplay
from titjudge.report.record import (
    answered_models,
    build_record,
    write_record_files,
)
from titjudge.report.run_files import write_run_files
from titjudge.report.run_summary import RunRoles, RunSpend, build_summary, write_summary
from titjudge.run.collector import tuned_collector
from titjudge.run.context import run_context, run_hub
from titjudge.run.loop import run_to_end

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShowProgress:
    """How a run shows each phase's progress on stderr (`report.progress`): a bar on a
    terminal, else a plain record every `interval` seconds and at each phase's end; `title`
    names the run there (an ablation's row)."""

    title: str = ""
    interval: float = RECORD_INTERVAL


def load_run_data(config: RunConfig, limit: int | None) -> tuple[list[Item], HumanData | None]:
    from titjudge.data.human import load_ratings, run_human_data
    from titjudge.data.manifest import load_manifest

    if config.data is None:
        raise ConfigError(
            f"config {config.name!r} has no 'data' section; add data.manifest to run it"
        )
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    all_items = load_manifest(config.data.manifest)
    items = all_items if limit is None else all_items[:limit]
    if config.data.human_pairs is None:
        return items, None
    kept = {item.item_id for item in items}
    pairs, ranks = run_human_data(all_items, kept, config.data.human_pairs, config.data.ranks)
    dataset = PublicSet.beside(Path(config.data.manifest))
    ratings = None
    if dataset is not None and dataset.rated:
        ratings = load_ratings(Path(config.data.manifest).parent / "ratings.csv", kept)
    return items, HumanData(pairs=pairs, ranks=ranks, items=items, dataset=dataset, ratings=ratings)


def history_dir(config: RunConfig) -> Path:
    """Where a config's runs are kept, one dir per run id (`report.runs`)."""
    return config.run.out / config.name


async def run_async(
    config: RunConfig,
    *,
    limit: int | None = None,
    out: Path | None = None,
    progress: ShowProgress | None = None,
    bootstrap: int = 1000,
    hub: ModelHub | None = None,
    data: tuple[list[Item], HumanData | None] | None = None,
) -> RunRecord:
    """Run one config; its record, as `titjudge.load_run(record.run_dir)` reads it back (its
    metrics, its counts as `record.summary`, its pairwise verdicts, items.jsonl's lines and its
    run dir). With `hub`, models already loaded there are reused and left open (the ablation
    shares one hub across rows); otherwise the run owns and closes its own. `progress`: show
    each phase's progress on stderr (None: show nothing).

    `data` is the run's items and human data as `load_run_data(config, limit)` returns
    them, when the caller has loaded them already (the ablation reads them once for all
    its rows); without it the run loads them itself."""
    started = time.perf_counter()
    items, human = data if data is not None else load_run_data(config, limit)
    staged = (
        runs.stage_run(exact=out)
        if out is not None
        else runs.stage_run(history=history_dir(config))
    )
    try:
        record = await _run_staged(
            config, staged.staging, (items, human), limit, progress, bootstrap, hub
        )
        assert record.summary is not None
        record.summary.wall_seconds = round(time.perf_counter() - started, 3)
        write_summary(staged.staging, record.summary)
        record.files = write_run_files(staged.staging)  # last: it lists every other file
        record.run_dir = staged.commit()
    except BaseException:  # a failed or interrupted run leaves no half run behind
        staged.discard()
        raise
    return record


@dataclass
class _Counters:
    """The hub's counters when the run started: what it counts from then on is this run's
    (a grid's rows share one hub)."""

    hub: ModelHub
    usage: dict[str, Usage]
    by_model: dict[str, Any]
    budget: Any
    online: dict[str, int]
    writes: dict[str, int]
    retries: int

    @classmethod
    def of(cls, hub: ModelHub) -> _Counters:
        return cls(
            hub=hub,
            usage=hub.usage(),
            by_model=hub.usage_by_model(),
            budget=hub.budget.state() if hub.budget is not None else None,
            online=hub.batch_sent_online(),
            writes=dict(hub.cache.stats.writes),
            retries=hub.retries()[0],
        )

    def progress(self, total: int) -> Progress:
        """The run's progress, its spend, retries and stopped models read off the hub live."""
        hub = self.hub
        return Progress(
            total=total,
            spent=lambda: sum(usage_since(self.usage, hub.usage()).values(), Usage()),
            retries=lambda: (hub.retries()[0] - self.retries, hub.retries()[1]),
            stopped=lambda: [f"{b.model} ({b.reason})" for b in hub.stopped()],
        )

    def cache_counts(self) -> dict[str, Any]:
        """This run's calls, cache hits, misses and writes (`records.cache_counts`)."""
        writes = {m: n - self.writes.get(m, 0) for m, n in self.hub.cache.stats.writes.items()}
        return cache_counts(usage_since(self.by_model, self.hub.usage_by_model()), writes)

    def spend(self, evaluation: RunEvaluation, batch: dict[str, Any]) -> RunSpend:
        """What the hub counted for this run, for its summary."""
        hub = self.hub
        for model, sent in hub.batch_sent_online().items():  # a batch model's calls online
            if sent > self.online.get(model, 0):
                batch.setdefault(model, {})["sent_online"] = sent - self.online.get(model, 0)
        budget = None
        if hub.budget is not None:  # the ledger's spend (a grid's: all rows so far) and this run's
            budget = {
                **hub.budget.to_json(since=self.budget),
                "items_undone": sum(1 for r in evaluation.results if budget_refused(r)),
                "pairs_undone": sum(
                    1
                    for run in evaluation.pairwise.values()
                    for v in run.judgements
                    if pair_refused(v)
                ),
            }
        return RunSpend(
            usage=usage_since(self.usage, hub.usage()),
            cache=self.cache_counts(),
            answered_by=provenance(usage_since(self.by_model, hub.usage_by_model())),
            stopped=[
                StoppedModel(model=b.model, reason=b.reason or "", requests=b.streak)
                for b in hub.stopped()
            ],
            budget=budget,
            batch=batch,
        )


async def _run_staged(
    config: RunConfig,
    out_dir: Path,
    data: tuple[list[Item], HumanData | None],
    limit: int | None,
    progress: ShowProgress | None,
    bootstrap: int,
    hub: ModelHub | None,
) -> RunRecord:
    """The run itself, every file written into `out_dir` (the staging dir) except
    summary.json, which `run_async` writes once the wall time is known."""
    items, human = data
    owned = hub is None
    hub = hub if hub is not None else run_hub(config.run)
    counters = _Counters.of(hub)
    try:
        ctx, judges = run_context(
            config, hub, human, counters.progress(len(items)), bootstrap, probe=SEND
        )
        batch: dict[str, Any] = {}
        if _batched(config):  # batch models' misses first, by batch jobs: the graph reads them
            from titjudge.agents.batch_phase import run_batches

            batch = await run_batches(items, ctx, show=progress is not None)
        ctx.progress.start()
        shown = progress or ShowProgress()
        display = ProgressDisplay(
            ctx.progress, show=progress is not None, title=shown.title, interval=shown.interval
        )
        async with LiveRecord(out_dir, config.name, ctx.progress), display:
            evaluation = await _run_items(items, ctx, config.run.concurrency)
        # once, after the graph: a model is loaded (and its facts known) only once a call
        # misses the cache
        resolved = _resolved(config, ctx, judges, hub, limit)
        run_dir.write_config(out_dir, config.model_dump(mode="json"), resolved)
        spend = counters.spend(evaluation, batch)
    finally:
        if owned:
            hub.cache.save_run_stats(config.name, counters.cache_counts())
            await hub.aclose()
    record = _record(config, evaluation, ctx, judges)
    write_record_files(out_dir, record, with_metrics=evaluation.metrics is not None)
    judge_models = {judge.name: judge.model for judge in judges}
    record.summary = build_summary(
        config.name,
        evaluation,
        len(human.pairs) if human else 0,
        RunRoles(
            describer_model=config.describer.model,
            judge_models=judge_models,
            fallbacks={judge.name: judge.fallback for judge in config.judges},
        ),
        spend,
    )
    if owned:
        hub.cache.close()
    record.run_dir = out_dir  # the staging dir, until `run_async` moves it into place
    return record


def _resolved(
    config: RunConfig, ctx: RunContext, judges: list[Judge], hub: ModelHub, limit: int | None
) -> dict[str, Any]:
    """config.yaml's `resolved`: what the run's models, template and judges turned out to be."""
    return {
        "describer": {
            **ctx.describer.backend.describe(),
            "template": ctx.describe_template.record(),
        },
        "judges": [judge.facts().doc() for judge in judges],
        "models": hub.describe(),
        "items": ctx.progress.total,
        "limit": limit,
        # what a model swapped on the command line left out of the config (config.swap)
        **({"swapped": config.swapped} if config.swapped else {}),
    }


def _record(
    config: RunConfig, evaluation: RunEvaluation, ctx: RunContext, judges: list[Judge]
) -> RunRecord:
    """The run's one record: the evaluator's metrics with each variant's provenance (no human
    pairs: no metrics, the record holds the counts), its item lines and verdicts."""
    record = RunRecord()
    if evaluation.metrics is not None:
        template = ctx.describe_template
        answered = answered_models(evaluation.results)
        record = build_record(
            evaluation.metrics,
            {judge.name: judge.provenance(answered.get(judge.name, ())) for judge in judges},
            {
                "model": config.describer.model,
                "template": template.name,
                "template_sha256": template.sha256,
                "max_tokens": config.describer.max_tokens,
                "temperature": config.describer.temperature,
            },
        )
        record.dataset = ctx.human.dataset if ctx.human is not None else None
    record.item_lines = evaluation.lines
    record.verdicts = {name: run.in_order() for name, run in evaluation.pairwise.items()}
    record.fits = {name: run.fit for name, run in evaluation.pairwise.items() if run.fit}
    return record


def budget_refused(result: ItemResult) -> bool:
    """Whether the budget left some call of this item unsent (it failed for that)."""
    errors = [result.described.error, *(o.error for o in result.outcomes)]
    return result.failed and any(NOT_SENT_BUDGET in (error or "") for error in errors)


def pair_refused(verdict: PairVerdict) -> bool:
    """Whether the budget left a call of this pair's verdict unsent (an order failed for it)."""
    orders = (verdict.forward, verdict.backward)
    return any(NOT_SENT_BUDGET in (order.error or "") for order in orders)


def _batched(config: RunConfig) -> bool:
    """Whether any model of the run is sent as batch jobs (`batch: true`)."""
    sections: list[Any] = [config.describer, *config.judges]
    return any(getattr(section, "batch", False) for section in sections)


async def _run_items(items: list[Item], ctx: RunContext, concurrency: int) -> RunEvaluation:
    """The graph runs the items (those the cache answers first, in one step), then the
    pairwise judges and the evaluator (`agents.graph`)."""
    from titjudge.agents.graph import drive

    with tuned_collector():
        state = await drive(items, ctx, concurrency)
    evaluation: RunEvaluation = state["evaluation"]
    return evaluation


def run(config: RunConfig, **kwargs: Any) -> RunRecord:
    """Synchronous wrapper (CLI and notebooks without a running loop).

    A run that stops early (a full disk, Ctrl-C) cancels the model calls in flight; litellm
    then drops request coroutines it had made but not started, and Python would print a
    "never awaited" warning for each. Those calls were never sent: the warnings are muted.
    Ctrl-C does not wait for worker threads (`run.loop`).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="coroutine '.*' was never awaited", category=RuntimeWarning
        )
        return run_to_end(run_async(config, **kwargs))


__all__ = ["ShowProgress", "budget_refused", "pair_refused", "run", "run_async", "run_context"]
