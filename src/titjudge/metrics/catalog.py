"""Every metric titjudge reports against human judgments, declared once.

A `Metric` says what the number is called in each view, which way is better, how its
bootstrap interval is computed, whether the spread across a repeated judge's samples is
reported, how it prints, and which counts it stands on. Everything that lists metrics reads
`metrics()`: the intervals and repeat spreads `metrics.summary.metrics_record` computes, the run
record's typed fields (`records.run_record.VariantRecord`, tested against this list), the
terminal tables (`report.render`), `audit --json` and the ablation's Table 2. A metric
computed per prompt is added by one declaration, `register(Metric(..., per_prompt=...))`;
the built-in ones are computed by `metrics.summary.metrics_record` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from titjudge.records.percent import percent

if TYPE_CHECKING:
    import numpy as np

    from titjudge.metrics.tables import EvalData, PromptValues

#: "pairs": a ratio over the evaluated human pairs (`outcome` names the `PairOutcomes` mask
#: counted), resampled by prompt; "prompts": a mean over prompts of per-prompt values
CiKind = Literal["pairs", "prompts"]


@dataclass(frozen=True)
class Count:
    """A count a metric stands on (the pairs or prompts it was computed over)."""

    name: str  # its key in a variant's metrics
    heading: str  # its column in the ablation's Table 2


@dataclass(frozen=True)
class Metric:
    name: str  # its key in a variant's metrics (metrics.json, `metrics --json`)
    label: str  # its heading in the terminal tables
    #: "higher" or "lower" is better; None: neither (the metric-tie rate), never marked best
    better: Literal["higher", "lower"] | None
    #: how its bootstrap interval is computed; None: it has none
    ci: CiKind | None
    #: the `PairOutcomes` mask a "pairs" interval counts (correct, metric_tie)
    outcome: str | None
    #: whether a repeated judge reports its spread across the samples
    repeats: bool
    #: printed as a percentage (x 100) with `digits` decimals, else as a number
    percent: bool
    digits: int
    #: the count it stands on, and the counts beside it in the record (numerators, p-value)
    stands_on: Count | None
    beside: tuple[str, ...] = ()
    #: its column in the ablation's Table 2 and that table's CSV name; None: not there
    heading: str | None = None
    csv: str | None = None
    #: which terminal table shows it: "pairs", "rankings" or None (its own line or table)
    table: Literal["pairs", "rankings"] | None = None
    #: how a metric added to the catalog is computed: its value per prompt from a variant's
    #: scores (`EvalData.score_vector`) and the human data; `evaluate` averages it over the
    #: prompts where it is defined, counts those under `stands_on` and, with `ci="prompts"`,
    #: gives it an interval. None: computed by `evaluate` itself (the metrics above)
    per_prompt: Callable[[np.ndarray, EvalData], PromptValues] | None = None

    def shown(self, value: float | None) -> str:
        """The value as the terminal prints it; '-' where it is undefined."""
        if value is None:
            return "-"
        return percent(value, self.digits) if self.percent else f"{value:.{self.digits}f}"


PAIRS = Count("n_pairs", "Pairs")
PROMPTS = Count("n_prompts", "Prompts")
PROMPTS_NDCG = Count("n_prompts_ndcg", "nDCG prompts")


def _ranking(name: str, label: str, over: Count) -> Metric:
    """A per-prompt ranking metric (higher is better), averaged over the prompts it stands
    on, with a per-prompt interval and a repeat spread; in the rankings table and Table 2
    under its label, its CSV column its name."""
    return Metric(
        name,
        label,
        better="higher",
        ci="prompts",
        outcome=None,
        repeats=True,
        percent=False,
        digits=4,
        stands_on=over,
        heading=label,
        csv=name,
        table="rankings",
    )


_DECLARED: list[Metric] = [
    Metric(
        "pairwise_accuracy",
        "pairwise acc",
        better="higher",
        ci="pairs",
        outcome="correct",
        repeats=True,
        percent=True,
        digits=2,
        stands_on=PAIRS,
        beside=("n_correct", "p_value"),
        heading="Acc (%)",
        csv="accuracy_pct",
        table="pairs",
    ),
    Metric(
        "metric_tie_rate",
        "metric ties",
        better=None,
        ci="pairs",
        outcome="metric_tie",
        repeats=True,
        percent=True,
        digits=1,
        stands_on=PAIRS,
        beside=("n_metric_ties",),
        heading="Ties (%)",
        csv="metric_tie_pct",
        table="pairs",
    ),
    _ranking("srcc", "SRCC", PROMPTS),
    _ranking("krcc", "KRCC", PROMPTS),
    _ranking("ndcg", "nDCG", PROMPTS_NDCG),
    Metric(
        "leaderboard_srcc",
        "SRCC vs human",
        better="higher",
        ci=None,
        outcome=None,
        repeats=True,
        percent=False,
        digits=4,
        stands_on=None,
    ),
]


def metrics() -> tuple[Metric, ...]:
    """Every metric, in order: the built-in ones, then any `register`ed."""
    return tuple(_DECLARED)


def by_name(name: str) -> Metric:
    return next(m for m in _DECLARED if m.name == name)


def ci_metrics() -> tuple[str, ...]:
    """Metrics with a bootstrap interval (a variant's `ci` has one key per name, None when
    the bootstrap is off)."""
    return tuple(m.name for m in _DECLARED if m.ci is not None)


def repeat_metrics() -> tuple[str, ...]:
    """Metrics whose spread across a repeated judge's samples is reported."""
    return tuple(m.name for m in _DECLARED if m.repeats)


def in_table(table: Literal["pairs", "rankings"]) -> tuple[Metric, ...]:
    """The metrics one terminal table shows, in order."""
    return tuple(m for m in _DECLARED if m.table == table)


def register(metric: Metric) -> None:
    """Add a metric computed per prompt (`Metric.per_prompt`): every view lists it from then
    on (the terminal table it names, metrics.json, the run record, `audit --json`, the
    ablation's Table 2 when it has a heading)."""
    if metric.per_prompt is None:
        raise ValueError(f"metric {metric.name!r}: a registered metric needs per_prompt")
    if metric.ci == "pairs":
        raise ValueError(f"metric {metric.name!r}: a registered metric's interval is per prompt")
    if any(m.name == metric.name for m in _DECLARED):
        raise ValueError(f"metric {metric.name!r} is declared already")
    counts = {m.stands_on.name for m in _DECLARED if m.stands_on is not None}
    if metric.stands_on is not None and metric.stands_on.name in counts:
        raise ValueError(
            f"metric {metric.name!r}: {metric.stands_on.name} is another metric's count; "
            "a registered metric counts its prompts under a name of its own"
        )
    _DECLARED.append(metric)


@contextmanager
def registered(metric: Metric) -> Iterator[Metric]:
    """`register(metric)` for the block's length (a test's, a notebook cell's)."""
    register(metric)
    try:
        yield metric
    finally:
        _DECLARED.remove(metric)


def record_fields() -> tuple[str, ...]:
    """Each tabled metric with the counts it stands on and those beside it, in order, each
    once: the numbers a run record types and `audit --json` repeats per variant."""
    found: list[str] = []
    for metric in _DECLARED:
        if metric.heading is None:
            continue
        for name in (
            metric.name,
            *((metric.stands_on.name,) if metric.stands_on else ()),
            *metric.beside,
        ):
            if name not in found:
                found.append(name)
    return tuple(found)


@dataclass(frozen=True)
class TableColumn:
    """A column of the ablation's Table 2: a metric, or the count the metrics before it
    stand on."""

    heading: str
    key: str
    csv: str
    metric: Metric | None  # None: a count, shown whole


def table2_columns() -> tuple[TableColumn, ...]:
    """Table 2's columns: the tabled metrics in order, each run of metrics standing on one
    count followed by that count (Acc, Ties, Pairs, SRCC, KRCC, Prompts, nDCG, nDCG prompts)."""
    tabled = [m for m in _DECLARED if m.heading is not None and m.csv is not None]
    columns: list[TableColumn] = []
    for index, metric in enumerate(tabled):
        assert metric.heading is not None and metric.csv is not None
        columns.append(TableColumn(metric.heading, metric.name, metric.csv, metric))
        following = tabled[index + 1] if index + 1 < len(tabled) else None
        count = metric.stands_on
        if count is not None and (following is None or following.stands_on != count):
            columns.append(TableColumn(count.heading, count.name, count.name, None))
    return tuple(columns)
