"""Every metric titjudge reports against human judgments, declared once.

A `Metric` says what the number is called in each view, which way is better, how its
bootstrap interval is computed, whether the spread across a repeated judge's samples is
reported, how it prints, and which counts it stands on. Everything that lists metrics reads
`METRICS`: the intervals and repeat spreads `metrics.summary.evaluate` computes, the run
record's typed fields (`report.record.VariantRecord`, tested against this list), the
terminal tables (`metrics.render`), `audit --json` and the ablation's Table 2. Adding a
metric is one entry here plus the code that computes it in `metrics.summary.evaluate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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

    def shown(self, value: float | None) -> str:
        """The value as the terminal prints it; '-' where it is undefined."""
        if value is None:
            return "-"
        return f"{100 * value:.{self.digits}f}%" if self.percent else f"{value:.{self.digits}f}"


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


METRICS: tuple[Metric, ...] = (
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
)

BY_NAME: dict[str, Metric] = {metric.name: metric for metric in METRICS}

#: metrics with a bootstrap interval (a variant's `ci` has one key per name, None when off)
CI_METRICS: tuple[str, ...] = tuple(m.name for m in METRICS if m.ci is not None)
#: metrics whose spread across a repeated judge's samples is reported
REPEAT_METRICS: tuple[str, ...] = tuple(m.name for m in METRICS if m.repeats)


def in_table(table: Literal["pairs", "rankings"]) -> tuple[Metric, ...]:
    """The metrics one terminal table shows, in order."""
    return tuple(m for m in METRICS if m.table == table)


def record_fields() -> tuple[str, ...]:
    """Each tabled metric with the counts it stands on and those beside it, in order, each
    once: the numbers a run record types and `audit --json` repeats per variant."""
    found: list[str] = []
    for metric in METRICS:
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
    tabled = [m for m in METRICS if m.heading is not None and m.csv is not None]
    columns: list[TableColumn] = []
    for index, metric in enumerate(tabled):
        assert metric.heading is not None and metric.csv is not None
        columns.append(TableColumn(metric.heading, metric.name, metric.csv, metric))
        following = tabled[index + 1] if index + 1 < len(tabled) else None
        count = metric.stands_on
        if count is not None and (following is None or following.stands_on != count):
            columns.append(TableColumn(count.heading, count.name, count.name, None))
    return tuple(columns)
