"""A run's counts, typed: what summary.json holds (`RunSummary`), with the failures at a
glance (`Failures`) it carries. The run record (`records.run_record.RunRecord.summary`) holds
one; `report.run_summary` reads and writes the file.

Keys: name, items, failed_items, image_errors, describer_failures, variants (per variant
its ok / fallback / failed counts), origins (per variant where its scores came from and
whether its model was stopped: `records.origins.VariantOrigin`), usage (per role,
`records.calls.Usage`), cache (this run's calls, hits, misses and writes, in all and per
model spec), answered_by (per configured model, the models that answered:
`records.provenance.ModelAnswers`), wall_seconds,
human_pairs, failures (`Failures`, grouped by `report.failures.failure_summary`); and only
when they apply: budget (`run.budget_usd`), batch (per `batch: true` model), model_means (a
run without human pairs), pairwise (per pairwise judge: counts and position bias).

Every field has a default, so a summary.json from an older titjudge (or laid out by hand)
that lacks a key loads; one without `origins` loads with None there: not known, never 0%.

`RunSummary.exit_code` is the run's exit code, one of `EXIT_CODES` (docs/commands.md, "Exit
codes", is the one table of them).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from titjudge.records.calls import Usage
from titjudge.records.metric_values import PositionBias
from titjudge.records.origins import StatusCounts, VariantOrigin
from titjudge.records.provenance import ModelAnswers


class FailureGroup(BaseModel):
    """Failures of one role on one model for one kind of reason."""

    role: str
    model: str | None = None
    kind: str
    count: int
    #: of `count`, calls never sent because their model was stopped for the run
    not_sent: int = 0
    #: one full reason of the group (the first seen)
    example: str

    def line(self) -> str:
        who = f"{self.role} {self.model}" if self.model else self.role
        unsent = f", {self.not_sent} not sent" if self.not_sent else ""
        return f"{who}: {self.count} x {self.kind}{unsent}"


class StoppedModel(BaseModel):
    """A model stopped for the run by its circuit breaker (`models.calls.breaker`)."""

    model: str
    reason: str
    #: the requests in a row that failed with `reason`
    requests: int

    def line(self) -> str:
        return (
            f"stopped: {self.model} after {self.requests} request"
            f"{'' if self.requests == 1 else 's'} in a row failed with {self.reason}; "
            "its other calls were not sent, a re-run tries them again"
        )


class Failures(BaseModel):
    """summary.json's `failures`: the groups, most failures first, and the stopped models."""

    groups: list[FailureGroup] = Field(default_factory=list)
    stopped: list[StoppedModel] = Field(default_factory=list)

    def lines(self) -> list[str]:
        """What the terminal shows: a line per group with its example under it, then a line
        per stopped model; nothing when nothing failed."""
        if not self.groups and not self.stopped:
            return []
        found = ["failures by role, model and reason (every reason in items.jsonl):"]
        for group in self.groups:
            found += [f"  {group.line()}", f"    e.g. {group.example}"]
        found += [model.line() for model in self.stopped]
        return found


#: a role's usage as summary.json keeps it: every counter, `answered_by` and `cost`
RoleUsage = Annotated[Usage, PlainSerializer(lambda usage: usage.to_json())]


def _drop_none(found: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """`found` without those of `keys` whose value is None (keys written only when they apply)."""
    return {k: v for k, v in found.items() if not (k in keys and v is None)}


class CacheCount(BaseModel):
    """Calls, cache hits, misses (the calls a model was asked) and answers written
    (`records.cache_counts`)."""

    calls: int = 0
    hits: int = 0
    misses: int = 0
    writes: int = 0


class CacheCounts(CacheCount):
    """This run's cache counts in all, and per model spec."""

    by_model: dict[str, CacheCount] = Field(default_factory=dict)


class BudgetSummary(BaseModel):
    """`run.budget_usd`'s ledger at the end (`models.calls.budget.Budget.to_json`): the budget,
    the spend of the whole ledger (an ablation grid's: all rows so far), this run's share, the
    calls it did not send by what they were made for (items' calls: descriptions and per-item
    judges; pairwise verdicts' calls), and the items and pairwise verdicts it left undone."""

    usd: float
    spent_usd: float
    left_usd: float
    stopped: bool
    calls_not_sent: int
    #: of `calls_not_sent`, those made for items and for pairwise verdicts (None: a summary
    #: written before they were told apart)
    item_calls_not_sent: int | None = None
    pair_calls_not_sent: int | None = None
    #: this run's spend and unsent calls (an ablation grid's budget has none)
    run_spent_usd: float | None = None
    run_calls_not_sent: int | None = None
    run_item_calls_not_sent: int | None = None
    run_pair_calls_not_sent: int | None = None
    items_undone: int = 0
    #: pairwise verdicts with an order the budget left unsent (every pairwise judge's)
    pairs_undone: int = 0

    #: the keys written only when they apply
    _optional: ClassVar[tuple[str, ...]] = (
        "item_calls_not_sent",
        "pair_calls_not_sent",
        "run_spent_usd",
        "run_calls_not_sent",
        "run_item_calls_not_sent",
        "run_pair_calls_not_sent",
    )

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _drop_none(handler(self), self._optional)

    def not_sent_line(self) -> str:
        """The calls not sent, by what they were made for, and what they left undone: items,
        and pairwise verdicts where any pairwise call went unsent."""
        parts = []
        if self.item_calls_not_sent:
            parts.append(f"{self.item_calls_not_sent} for items")
        if self.pair_calls_not_sent:
            parts.append(f"{self.pair_calls_not_sent} for pairwise verdicts")
        split = f" ({', '.join(parts)})" if parts else ""
        undone = f"{self.items_undone} items"
        if self.pair_calls_not_sent or self.pairs_undone:
            undone += f" and {self.pairs_undone} pairwise verdicts"
        return f"{self.calls_not_sent} calls not sent{split}, {undone} left undone"


class BatchModel(BaseModel):
    """One `batch: true` model: its jobs (those resumed from a killed run included, and
    `resumed` of them), the requests (lines) in them and of those the lines answered and
    failed, as the provider counts them, at the batch price (`models.calls.batch.progress`),
    and its calls sent online all the same. A model whose every call went online has
    `sent_online` alone."""

    jobs: int | None = None
    resumed: int | None = None
    requests: int | None = None
    answered: int | None = None
    failed: int | None = None
    price: str | None = None
    sent_online: int | None = None

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _drop_none(handler(self), tuple(type(self).model_fields))

    def jobs_line(self) -> str | None:
        """What its jobs did, in a few words (None: no job ran): `2 jobs (1 resumed), 16
        requests, 15 answered, 1 failed`."""
        if not self.jobs:
            return None
        resumed = f" ({self.resumed} resumed)" if self.resumed else ""
        return (
            f"{self.jobs} job{'' if self.jobs == 1 else 's'}{resumed}, {self.requests} "
            f"requests, {self.answered} answered, {self.failed} failed"
        )


class RankedModel(BaseModel):
    """A T2I model's mean score in one variant, and its rank (equal means share one)."""

    model: str
    mean: float
    n: int
    rank: int


class ModelMeans(BaseModel):
    """One variant's T2I models ranked by mean score (`metrics.model_means`), and the rows
    left out of the means."""

    ranking: list[RankedModel] = Field(default_factory=list)
    n_failed_left_out: int = 0
    n_fallback_left_out: int = 0


class PairwiseSummary(PositionBias):
    """One pairwise judge's counts and position bias (`metrics.pairwise_stats.run_summary`):
    the position bias as the run record types it, with the judge's pairs, failures and
    repeats."""

    model_config = ConfigDict(extra="ignore")

    n_pairs: int = 0
    n_failed: int = 0
    repeats: int = 1


#: `titjudge`'s exit codes, one table (docs/commands.md, "Exit codes", repeats it): each
#: code and when a command exits with it; where several apply, the first listed of 3, 4, 1
EXIT_OK, EXIT_FAILED_ITEMS, EXIT_BAD_INPUT = 0, 1, 2
#: the exit code of a run (or grid) that `run.budget_usd` stopped with calls left unsent
EXIT_BUDGET = 3
#: a run (or grid) in which a model was stopped by its circuit breaker, or a variant's scores
#: came mostly (more than half) from its fallback judge: its numbers are not its judges' own
EXIT_DEGRADED = 4
#: Ctrl-C: finished calls are cached, the staging dir removed; a re-run resumes
EXIT_INTERRUPTED = 130
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "everything ran: no item failed, no model was stopped, every variant's scores "
    "are at least half its own",
    EXIT_FAILED_ITEMS: "the run finished with failed items (reported, reasons in items.jsonl)",
    EXIT_BAD_INPUT: "bad input or config: one line on stderr, nothing sent or written",
    EXIT_BUDGET: "run.budget_usd stopped the run or grid with calls left unsent",
    EXIT_DEGRADED: "a model was stopped by its circuit breaker (run.stop_after), or a "
    "variant's scores came mostly from its fallback judge",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C): finished calls are cached, nothing half written",
}

#: summary.json's keys written only when they apply
_OPTIONAL = ("origins", "failures", "budget", "batch", "model_means", "pairwise")


class RunSummary(BaseModel):
    """A run's counts (summary.json; see the module docstring for its keys)."""

    name: str = ""
    items: int = 0
    #: items with a failed variant
    failed_items: int = 0
    image_errors: int = 0
    #: items whose description call failed (an unreadable image is an image error)
    describer_failures: int = 0
    #: per variant, its items' status counts: ok, fallback, failed
    variants: dict[str, StatusCounts] = Field(default_factory=dict)
    usage: dict[str, RoleUsage] = Field(default_factory=dict)
    cache: CacheCounts = Field(default_factory=CacheCounts)
    answered_by: dict[str, ModelAnswers] = Field(default_factory=dict)
    #: None until the run has ended (the runner sets it just before writing the file)
    wall_seconds: float | None = None
    #: per variant: where its scores came from, whether its model was stopped; None: a
    #: summary written before they were recorded (not known)
    origins: dict[str, VariantOrigin] | None = None
    human_pairs: int = 0
    #: None: a summary written before failures were recorded
    failures: Failures | None = None
    budget: BudgetSummary | None = None
    batch: dict[str, BatchModel] | None = None
    model_means: dict[str, ModelMeans] | None = None
    pairwise: dict[str, PairwiseSummary] | None = None

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _drop_none(handler(self), _OPTIONAL)

    @property
    def budget_spent(self) -> bool:
        """Whether `run.budget_usd` stopped the run with calls left unsent."""
        budget = self.budget
        return bool(budget and budget.stopped and budget.run_calls_not_sent)

    @property
    def stopped_models(self) -> list[str] | None:
        """The models stopped for the run by their circuit breaker; None: not recorded."""
        return None if self.failures is None else [m.model for m in self.failures.stopped]

    @property
    def degraded(self) -> bool:
        """A model was stopped, or some variant's scores came mostly from its fallback."""
        origins = self.origins
        if origins is None:  # an older summary: its status counts say as much
            origins = {name: VariantOrigin.of(c) for name, c in self.variants.items()}
        return bool(self.stopped_models) or any(o.degraded for o in origins.values())

    @property
    def exit_code(self) -> int:
        """`titjudge run`'s exit code for the run (`EXIT_CODES`): 3 when the budget left calls
        unsent, else 4 when a model was stopped or a variant's scores came mostly from its
        fallback, else 1 when items failed, else 0."""
        if self.budget_spent:
            return EXIT_BUDGET
        if self.degraded:
            return EXIT_DEGRADED
        return EXIT_FAILED_ITEMS if self.failed_items else EXIT_OK

    def summary_json(self) -> dict[str, Any]:
        """The dict summary.json holds."""
        return self.model_dump(mode="json")


__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BUDGET",
    "EXIT_CODES",
    "EXIT_DEGRADED",
    "EXIT_FAILED_ITEMS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "BatchModel",
    "BudgetSummary",
    "CacheCount",
    "CacheCounts",
    "FailureGroup",
    "Failures",
    "ModelMeans",
    "PairwiseSummary",
    "RankedModel",
    "RoleUsage",
    "RunSummary",
    "StoppedModel",
]
