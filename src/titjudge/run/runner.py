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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.agents.item import RunContext
from titjudge.config.schema import RunConfig
from titjudge.errors import ConfigError
from titjudge.metrics.evaluate import HumanData
from titjudge.models.calls.budget import NOT_SENT_BUDGET
from titjudge.models.calls.provenance import provenance
from titjudge.models.core.clients import SEND
from titjudge.models.hub import ModelHub, usage_since
from titjudge.records import ItemResult, Progress, RunEvaluation, cache_counts
from titjudge.records.calls import Usage
from titjudge.records.items import Item
from titjudge.records.origins import variant_origins
from titjudge.records.pairs import PairVerdict
from titjudge.records.run_record import RunRecord
from titjudge.records.summary import RunSummary, StoppedModel
from titjudge.report import run_dir, runs
from titjudge.report.failures import failure_summary
from titjudge.report.progress import RECORD_INTERVAL, ProgressDisplay
from titjudge.report.record import answered_models, build_record, variant_provenance, write_record
from titjudge.report.run_files import write_run_files
from titjudge.report.run_summary import write_summary
from titjudge.run.context import run_context, run_hub
from titjudge.run.loop import run_to_end

log = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    """What `run_async` gives: the run's one record (`record`: its metrics, its counts as
    `record.summary`, its pairwise verdicts, items.jsonl's lines and its run dir, the record
    `titjudge.load_run(record.run_dir)` reads back) and each item's results in memory
    (`results`, which the record's item lines were built from)."""

    record: RunRecord
    results: list[ItemResult] = field(repr=False, default_factory=list)

    @property
    def summary(self) -> RunSummary:
        """The run's counts, as summary.json holds them: `record.summary`."""
        assert self.record.summary is not None, "a finished run's record holds its summary"
        return self.record.summary

    @property
    def out_dir(self) -> Path:
        """The run dir: `record.run_dir`."""
        assert self.record.run_dir is not None, "a finished run's record names its run dir"
        return self.record.run_dir

    @property
    def exit_code(self) -> int:
        """`titjudge run`'s exit code (`RunSummary.exit_code`)."""
        return self.summary.exit_code


def load_run_data(config: RunConfig, limit: int | None) -> tuple[list[Item], HumanData | None]:
    from titjudge.data.human import run_human_data
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
    return items, HumanData(pairs=pairs, ranks=ranks, items=items)


def history_dir(config: RunConfig) -> Path:
    """Where a config's runs are kept, one dir per run id (`report.runs`)."""
    return config.run.out / config.name


async def run_async(
    config: RunConfig,
    *,
    limit: int | None = None,
    out: Path | None = None,
    show_progress: bool = False,
    bootstrap: int = 1000,
    hub: ModelHub | None = None,
    progress_title: str = "",
    progress_interval: float = RECORD_INTERVAL,
    data: tuple[list[Item], HumanData | None] | None = None,
) -> RunOutcome:
    """Run one config. With `hub`, models already loaded there are reused and left open
    (the ablation shares one hub across rows); otherwise the run owns and closes its own.

    `show_progress` shows each phase's progress on stderr (`report.progress`): a bar on a
    terminal, else a plain record every `progress_interval` seconds and at each phase's end;
    `progress_title` names the run there (an ablation's row).

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
        found = await _run_staged(
            config,
            staged.staging,
            items,
            human,
            limit=limit,
            show_progress=show_progress,
            bootstrap=bootstrap,
            hub=hub,
            progress_title=progress_title,
            progress_interval=progress_interval,
        )
        found.summary.wall_seconds = round(time.perf_counter() - started, 3)
        write_summary(staged.staging, found.summary)
        found.record.files = write_run_files(staged.staging)  # last: it lists every other file
        found.record.run_dir = staged.commit()
    except BaseException:  # a failed or interrupted run leaves no half run behind
        staged.discard()
        raise
    return found


async def _run_staged(
    config: RunConfig,
    out_dir: Path,
    items: list[Item],
    human: HumanData | None,
    *,
    limit: int | None,
    show_progress: bool,
    bootstrap: int,
    hub: ModelHub | None,
    progress_title: str,
    progress_interval: float,
) -> RunOutcome:
    """The run itself, every file written into `out_dir` (the staging dir) except
    summary.json, which `run_async` writes once the wall time is known."""
    owned = hub is None
    batch: dict[str, Any] = {}
    if hub is None:
        hub = run_hub(config.run)
    cache = hub.cache
    usage_before, by_model_before = hub.usage(), hub.usage_by_model()
    budget_before = hub.budget.state() if hub.budget is not None else None
    online_before = hub.batch_sent_online()
    writes_before = dict(cache.stats.writes)
    retries_before = hub.retries()[0]

    def since(now: tuple[int, str | None], before: int) -> tuple[int, str | None]:
        return now[0] - before, now[1]

    def run_cache_counts() -> dict[str, Any]:
        """This run's calls, cache hits, misses and writes (`records.cache_counts`)."""
        writes = {m: n - writes_before.get(m, 0) for m, n in cache.stats.writes.items()}
        return cache_counts(usage_since(by_model_before, hub.usage_by_model()), writes)

    try:
        progress = Progress(
            total=len(items),
            spent=lambda: sum(usage_since(usage_before, hub.usage()).values(), Usage()),
            retries=lambda: since(hub.retries(), retries_before),
            stopped=lambda: [f"{b.model} ({b.reason})" for b in hub.stopped()],
        )
        ctx, judges = run_context(config, hub, human, progress, bootstrap, probe=SEND)
        describer, template = ctx.describer, ctx.describe_template

        def record() -> None:
            """The config with what was resolved; written again after the graph, because a
            model is loaded (and its facts known) only once a call misses the cache."""
            resolved = {
                "describer": {**describer.backend.describe(), "template": template.record()},
                "judges": [judge.record() for judge in judges],
                "models": hub.describe(),
                "items": len(items),
                "limit": limit,
                # what a model swapped on the command line left out of the config (config.swap)
                **({"swapped": config.swapped} if config.swapped else {}),
            }
            run_dir.write_config(out_dir, config.model_dump(mode="json"), resolved)

        record()
        if _batched(config):  # batch models' misses first, by batch jobs: the graph reads them
            from titjudge.agents.batch_phase import run_batches

            batch = await run_batches(items, ctx, show=show_progress)
        progress.start()
        display = ProgressDisplay(
            progress, show=show_progress, title=progress_title, interval=progress_interval
        )
        async with display:
            evaluation = await _run_items(items, ctx, config.run.concurrency)
        record()
        for model, sent in hub.batch_sent_online().items():  # a batch model's calls online
            if sent > online_before.get(model, 0):
                batch.setdefault(model, {})["sent_online"] = sent - online_before.get(model, 0)
    finally:
        if owned:
            cache.save_run_stats(config.name, run_cache_counts())
            await hub.aclose()
    results, pair_runs = evaluation.results, evaluation.pairwise
    run_record = RunRecord()  # no human pairs: no metrics.json, the record holds the counts
    if evaluation.metrics is not None:
        run_record = build_record(
            evaluation.metrics,
            variant_provenance(
                [j.model_dump(mode="json") for j in config.judges],
                [judge.record() for judge in judges],
                answered_models(results),
            ),
            {
                "model": config.describer.model,
                "template": template.name,
                "template_sha256": template.sha256,
                "max_tokens": config.describer.max_tokens,
                "temperature": config.describer.temperature,
            },
        )
    # every file but config.yaml from the record (summary.json: `run_async`); scores.csv is
    # its item lines' rows, the rows the metrics were computed from
    run_record.item_lines = evaluation.lines
    run_record.verdicts = {name: run.in_order() for name, run in pair_runs.items()}
    rows = evaluation.rows  # the record's item lines' rows
    run_dir.write_score_rows(out_dir, rows)
    run_dir.write_items(out_dir, run_record.item_lines)
    for name, verdicts in run_record.verdicts.items():
        run_dir.write_pairs(out_dir, name, verdicts)
    if evaluation.metrics is not None:
        write_record(out_dir, run_record)
    budget = None
    if hub.budget is not None:  # the ledger's spend (a grid's: all rows so far) and this run's
        budget = {
            **hub.budget.to_json(since=budget_before),
            "items_undone": sum(1 for r in results if budget_refused(r)),
            "pairs_undone": sum(
                1 for run in pair_runs.values() for v in run.judgements if pair_refused(v)
            ),
        }
    means = None
    if evaluation.metrics is None:  # no human pairs to compare with: the models' mean scores
        from titjudge.metrics.model_means import model_means

        means = model_means(rows, {r.item.item_id: r.item.t2i_model for r in results})
    pairwise = None
    if pair_runs:
        from titjudge.metrics.pairwise_stats import run_summary

        pairwise = {name: run_summary(run) for name, run in pair_runs.items()}
    stopped = [
        StoppedModel(model=b.model, reason=b.reason or "", requests=b.streak) for b in hub.stopped()
    ]
    judge_models = {judge.name: judge.record().get("model") for judge in judges}
    summary = RunSummary(
        name=config.name,
        items=len(results),
        failed_items=evaluation.n_failed_items,
        image_errors=sum(1 for r in results if r.image_error),
        describer_failures=sum(
            1 for r in results if r.described.text is None and r.described.call is not None
        ),
        variants=evaluation.status_counts,
        # per variant: its share of scores from its fallback, whether its model was stopped
        origins=variant_origins(
            evaluation.status_counts,
            {judge.name: judge.fallback for judge in config.judges},
            judge_models,
            [model.model for model in stopped],
        ),
        usage=dict(sorted(usage_since(usage_before, hub.usage()).items())),
        cache=run_cache_counts(),
        # per configured model, the models its replies say answered (`models.calls.provenance`)
        answered_by=provenance(usage_since(by_model_before, hub.usage_by_model())),
        human_pairs=len(human.pairs) if human else 0,
        # grouped by role, model and reason, and the models stopped (`report.failures`)
        failures=failure_summary(results, config.describer.model, judge_models, stopped),
        budget=budget,
        # per batch model: its jobs, requests, answers and failures, at the batch price
        batch=batch or None,
        model_means=means,
        pairwise=pairwise,
    )
    if owned:
        cache.close()
    run_record.summary = summary
    run_record.run_dir = out_dir  # the staging dir, until `run_async` moves it into place
    return RunOutcome(record=run_record, results=results)


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

    state = await drive(items, ctx, concurrency)
    evaluation: RunEvaluation = state["evaluation"]
    return evaluation


def run(config: RunConfig, **kwargs: Any) -> RunOutcome:
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


__all__ = ["RunOutcome", "budget_refused", "pair_refused", "run", "run_async", "run_context"]
