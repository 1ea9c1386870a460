"""Records that cross stages: what the graph produces for an item and for a run, and what the
ablation grid produces per cell, row and grid (here), and the recorded facts they hold, in
the submodules: data items (`items`), call results and usage (`calls`), judge outcomes
(`outcomes`), where a variant's scores came from (`origins`), pairwise judgements (`pairs`),
repeat statistics (`repeats`), image inputs (`image_input`, `images`), model specs and provenance lines (`spec`, `provenance`),
descriptions file lines (`descriptions`) and reserved names (`names`).

The package sits below the models, judges and data loaders that fill these in and imports
none of them (`lint-imports` holds that), so every stage, the metrics and the reports read
records without a circle and without importing a judge or a model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral
from pathlib import Path
from typing import Any

from titjudge.records.calls import Usage
from titjudge.records.item_line import ItemLine
from titjudge.records.items import Item, ScoreRow
from titjudge.records.origins import StatusCounts, VariantOrigin
from titjudge.records.outcomes import Described, JudgeOutcome
from titjudge.records.pairs import PairwiseRun
from titjudge.records.run_record import RunRecord, Thresholds, VariantRecord
from titjudge.records.summary import EXIT_BUDGET, EXIT_DEGRADED, EXIT_FAILED_ITEMS, EXIT_OK
from titjudge.submodules import lazy_submodules


@dataclass
class ItemResult:
    """Everything the run knows about one item after the judge step."""

    item: Item
    described: Described
    outcomes: list[JudgeOutcome]
    image_error: str | None = None

    @property
    def failed(self) -> bool:
        """The one definition of a failed item: its description failed (a skipped one, which
        no judge reads, is not a failure) or any of its judges failed. The progress bar, the
        run's summary and exit code, and `titjudge score` all count this."""
        return self.described.failed or any(o.status == "failed" for o in self.outcomes)


@dataclass
class RunEvaluation:
    """What the evaluator hands the run writer: items in item-id order with the pairwise
    judges' per-item outcomes attached, their items.jsonl lines (one per item and variant,
    the score rows the metrics were computed from), the metrics
    (`metrics.summary.metrics_record`'s record, without provenance; None without human data), the
    pairwise runs, per-variant status counts and the failed-item count."""

    results: list[ItemResult]
    lines: list[ItemLine]
    metrics: RunRecord | None
    pairwise: dict[str, PairwiseRun]
    status_counts: dict[str, StatusCounts]
    n_failed_items: int

    @property
    def rows(self) -> list[ScoreRow]:
        """scores.csv's rows: one per line (`ItemLine.score_row`)."""
        return [line.score_row() for line in self.lines]


@dataclass
class Progress:
    """What a run has done so far, phase by phase; updated from the event loop only.

    Three phases are counted apart: `described` (an item's description returned, or was
    skipped or failed), `judged` (the item is done: every judge and fallback ran) and, after
    every item, `pairs_done` of `pairs_total` pairwise judgements. Each item worker describes
    an item and then judges it before taking the next, so `described` runs ahead of `judged`.

    Cache hits have one definition everywhere a run reports them (this display, the printed
    usage, summary.json and `titjudge cache stats`): a call is one model call the describer
    or a judge made (an embedding counts one call per text); a cache hit is a call answered
    without asking the model in this run: found in the cache, answered by another run sharing
    the cache dir, or shared with an identical call of this run (two judges asking the same
    thing, one prompt embedded for all its images). Both come from `spent()`: `calls` and
    `cache_hits` of the run's model-call ledgers.
    """

    total: int = 0
    described: int = 0
    #: items done (every judge and fallback ran)
    done: int = 0
    failed_items: int = 0
    pairs_total: int = 0
    pairs_done: int = 0
    #: what the run's model calls took so far (the hub's ledgers since the run started)
    spent: Callable[[], Usage] = Usage
    #: attempts sent again after a transient error since the run started, and the last such
    #: error's kind (the hub's, `ModelHub.retries`), shown as they happen
    retries: Callable[[], tuple[int, str | None]] = lambda: (0, None)
    #: the models stopped for the run so far by their circuit breaker, each with its reason
    #: (the hub's, `ModelHub.stopped`), named from the moment they stop
    stopped: Callable[[], list[str]] = list
    on_update: Callable[[Progress], None] | None = None
    #: called with each item's result as it is done (the live record, `report.live`)
    on_item: Callable[[ItemResult], None] | None = None
    #: called once when a phase ends, with the phase's name (described, judged, pairs)
    on_phase_end: Callable[[Progress, str], None] | None = None
    clock: Callable[[], float] = time.monotonic
    #: when the item phase started (the run's start) and when the pairwise phase started
    started: float | None = None
    pairs_started: float | None = None

    def start(self) -> None:
        self.started = self.clock()

    def item_described(self) -> None:
        self.described += 1
        self._updated("described" if self.described == self.total else None)

    def item_done(self, result: ItemResult) -> None:
        self.done += 1
        self.failed_items += result.failed
        if self.on_item is not None:
            self.on_item(result)
        self._updated("judged" if self.done == self.total else None)

    def pairs_begin(self, total: int) -> None:
        self.pairs_total, self.pairs_started = total, self.clock()
        self._updated(None)

    def pairs_judged(self, count: int) -> None:
        self.pairs_done += count
        self._updated("pairs" if self.pairs_done == self.pairs_total else None)

    def _updated(self, ended: str | None) -> None:
        if self.on_update is not None:
            self.on_update(self)
        if ended is not None and self.on_phase_end is not None:
            self.on_phase_end(self, ended)

    def eta(self) -> float | None:
        """Seconds left in the current phase at its rate so far; None until there is a rate.

        While items run, a unit of work is one description or one judged item (an item is
        two units), so a rate exists from the first description on. Once every item is done,
        the phase is the pairwise one: pairs left at the pairs' rate. 0 when all is done."""
        now = self.clock()
        if self.done < self.total:
            units_done, units_left = self.described + self.done, 2 * self.total
            units_left -= units_done
            since = self.started
        elif self.pairs_done < self.pairs_total:
            units_done, units_left = self.pairs_done, self.pairs_total - self.pairs_done
            since = self.pairs_started
        else:
            return 0.0
        if since is None or units_done == 0 or now <= since:
            return None
        return units_left * (now - since) / units_done


def cache_counts(usage: dict[str, Usage], writes: dict[str, int]) -> dict[str, Any]:
    """A run's cache counts as summary.json and `titjudge cache stats` keep them, in all and
    per model spec, from the per-model call ledgers (`usage`) and answers stored (`writes`).

    `calls` and `hits` follow the one definition in `Progress` (the display shows the same
    two numbers); `misses` are the calls the model was asked for (calls - hits, failures
    included); `writes` the answers this run stored in the cache."""

    def counts(used: Usage, wrote: int) -> dict[str, int]:
        return {
            "calls": used.calls,
            "hits": used.cache_hits,
            "misses": used.calls - used.cache_hits,
            "writes": wrote,
        }

    models = sorted(set(usage) | set(writes))
    by_model = {m: counts(usage.get(m, Usage()), writes.get(m, 0)) for m in models}
    return {
        **counts(sum(usage.values(), Usage()), sum(writes.values())),
        "by_model": by_model,
    }


@dataclass(frozen=True)
class ColumnInfo:
    """One comparer column as the tables show it."""

    name: str
    label: str
    kind: str
    model: str | None


@dataclass
class CellResult:
    """One (VLM, comparer) cell: the variant's metrics in that row's run."""

    n_items: int = 0
    n_failed: int = 0
    n_fallback: int = 0
    #: the variant's record in the row's run (its metrics.json entry), None without one
    metrics: VariantRecord | None = None
    error: str | None = None
    #: where its scores came from, whether its model was stopped (the row run's summary.json
    #: `origins`; None: not recorded)
    origin: VariantOrigin | None = None

    @property
    def accuracy(self) -> float | None:
        return None if self.metrics is None else self.metrics.pairwise_accuracy

    @property
    def has_value(self) -> bool:
        return self.accuracy is not None

    def count(self, key: str) -> int:
        """A count from the cell's metrics (`n_pairs`, `n_prompts`, `n_prompts_ndcg`): how
        many human pairs or prompts its values stand on; 0 when there are no metrics."""
        value = self.metrics.get(key) if self.metrics is not None else None
        return int(value) if isinstance(value, Integral) else 0


@dataclass
class RowResult:
    """One VLM row: its run dir and cells, or why it failed as a whole."""

    name: str
    label: str
    model: str
    run_dir: Path
    error: str | None = None
    n_items: int = 0
    n_failed_items: int = 0
    cells: dict[str, CellResult] = field(default_factory=dict)
    #: the row run's record (metrics.json), None when it wrote none
    metrics: RunRecord | None = None
    #: a model was stopped in its run, or a cell's scores came mostly from its fallback
    #: (`RunSummary.degraded`)
    degraded: bool = False

    @property
    def has_value(self) -> bool:
        return any(cell.has_value for cell in self.cells.values())


@dataclass
class AblationResult:
    name: str
    out_dir: Path
    columns: list[ColumnInfo]
    disabled: list[ColumnInfo]
    rows: list[RowResult]
    notes: list[str] = field(default_factory=list)
    #: the grid's budget ledger at its end (`run.budget_usd`), with the items left undone
    budget: dict[str, Any] | None = None

    @property
    def shown_columns(self) -> list[ColumnInfo]:
        """Columns with a score in at least one row, in config order."""
        return [
            c
            for c in self.columns
            if any(r.cells.get(c.name, CellResult()).has_value for r in self.rows)
        ]

    @property
    def shown_rows(self) -> list[RowResult]:
        return [r for r in self.rows if r.has_value]

    @property
    def n_failed_items(self) -> int:
        return sum(r.n_failed_items for r in self.rows)

    @property
    def exit_code(self) -> int:
        """As a run's (`records.summary.EXIT_CODES`): 3 when the budget left calls unsent,
        else 4 when a row's run stopped a model or a cell's scores came mostly from its
        fallback, else 1 when any item failed or any row could not run at all, else 0."""
        if self.budget is not None and self.budget["stopped"] and self.budget["calls_not_sent"]:
            return EXIT_BUDGET
        if any(r.degraded for r in self.rows):
            return EXIT_DEGRADED
        failed = self.n_failed_items or any(r.error for r in self.rows)
        return EXIT_FAILED_ITEMS if failed else EXIT_OK

    @property
    def thresholds(self) -> Thresholds | None:
        """Chance thresholds for the largest pair count of any row (rows share the human pairs)."""
        found = [r.metrics.thresholds for r in self.rows if r.metrics is not None]
        return max((t for t in found if t is not None), key=lambda t: t.n_pairs, default=None)

    @property
    def leaderboard_models(self) -> list[str]:
        for row in self.rows:
            if row.metrics is not None and row.metrics.leaderboard is not None:
                return list(row.metrics.leaderboard.models)
        return []


__getattr__ = lazy_submodules(__name__)
