"""summary.json: read into and written from the run record's `summary`
(`records.summary.RunSummary`, held by `records.run_record.RunRecord.summary`).

The runner builds it once the graph is done (`build_summary`, from the evaluator's
`RunEvaluation` and the hub's `RunSpend`) and writes it once at the end of a run
(`write_summary`); `titjudge run`'s closing
lines, every ablation row's lines, `titjudge runs list`, the audit and `titjudge.load_run`
read it back with `load_summary`. A summary.json whose values do not fit is refused with one
line naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.files import parse_record, read_json_object
from titjudge.records import RunEvaluation
from titjudge.records.calls import Usage
from titjudge.records.origins import variant_origins
from titjudge.records.summary import RunSummary, StoppedModel


def parse_summary(doc: Mapping[str, Any], where: str) -> RunSummary:
    """A summary.json object as a `RunSummary`; a DataError names the first key that does
    not fit."""
    return parse_record(RunSummary, doc, where, "run summary")


def load_summary(run_dir: Path) -> RunSummary | None:
    """The run's summary.json as a `RunSummary`; None when it has none (a run that was
    interrupted before writing it, or a folder laid out by hand)."""
    path = run_dir / "summary.json"
    if not path.is_file():
        return None
    return parse_summary(read_json_object(path, "summary file"), str(path))


@dataclass
class RunSpend:
    """What the run's hub counted for this run alone, read off it by the runner once the
    graph is done: the summary's usage, cache, provenance, budget, batch and stopped models."""

    #: per role, this run's tokens, calls and dollars
    usage: dict[str, Usage] = field(default_factory=dict)
    #: this run's calls, cache hits, misses and writes (`records.cache_counts`)
    cache: dict[str, Any] = field(default_factory=dict)
    #: per configured model, the models its replies say answered (`models.calls.provenance`)
    answered_by: dict[str, Any] = field(default_factory=dict)
    #: the models stopped for the run by their circuit breaker
    stopped: list[StoppedModel] = field(default_factory=list)
    #: the ledger's spend (a grid's: all rows so far) and what the budget left undone
    budget: dict[str, Any] | None = None
    #: per batch model: its jobs, requests, answers and failures, at the batch price
    batch: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunRoles:
    """Who did what in the run, as its config says: the describer's model, each judge's
    model (as it records itself) and each judge's fallback."""

    describer_model: str
    judge_models: dict[str, str | None]
    fallbacks: dict[str, str | None]


def build_summary(
    name: str,
    evaluation: RunEvaluation,
    human_pairs: int,
    roles: RunRoles,
    spend: RunSpend,
) -> RunSummary:
    """summary.json's counts of a finished run, built in one place from what the evaluator
    returned and what the hub counted; `wall_seconds` is set once the run dir is written."""
    from titjudge.report.failures import failure_summary

    results, pair_runs = evaluation.results, evaluation.pairwise
    means = None
    if evaluation.metrics is None:  # no human pairs to compare with: the models' mean scores
        from titjudge.metrics.model_means import model_means

        means = model_means(evaluation.rows, {r.item.item_id: r.item.t2i_model for r in results})
    pairwise = None
    if pair_runs:
        from titjudge.metrics.pairwise_stats import run_summary

        pairwise = {name: run_summary(run) for name, run in pair_runs.items()}
    return RunSummary(
        name=name,
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
            roles.fallbacks,
            roles.judge_models,
            [model.model for model in spend.stopped],
        ),
        usage=dict(sorted(spend.usage.items())),
        cache=spend.cache,
        answered_by=spend.answered_by,
        human_pairs=human_pairs,
        # grouped by role, model and reason, and the models stopped (`report.failures`)
        failures=failure_summary(results, roles.describer_model, roles.judge_models, spend.stopped),
        budget=spend.budget,
        batch=spend.batch or None,
        model_means=means,
        pairwise=pairwise,
    )


def write_summary(out: Path, summary: RunSummary) -> None:
    """summary.json: the one place a run's counts are written."""
    from titjudge.report.run_dir import write_json

    write_json(out, "summary.json", summary.summary_json())


__all__ = [
    "RunRoles",
    "RunSpend",
    "build_summary",
    "load_summary",
    "parse_summary",
    "write_summary",
]
