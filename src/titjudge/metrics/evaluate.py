"""The evaluator step: item results -> score rows -> metrics against human data.

`evaluate_run` is the whole step: it orders the items by id (the one place a run sorts
them), attaches the pairwise judges' per-item outcomes, makes the score rows, computes the
metrics and counts statuses and failed items; the run writes what it returns as it is.

Every number is computed once, by `metrics.summary.metrics_record`: it applies the fallback rule
(`metrics.fallback`) and, for a pairwise judge, reads its pair outcomes from the verdicts
(its per-item scores are win rates, which give SRCC, KRCC, nDCG, the leaderboard and tie
calibration as for any variant). No number is patched in afterwards; the repeat spreads
below are a field of their own (`repeats`), and `report.record` adds each variant's provenance.

Repeated judges (`repeats: N`): every metric is also computed with sample k's scores
alone, for each k, and `repeats` reports mean, std (n-1), min, max and the values across
the N repeats (the TIFA k-subset view of scorer randomness).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from titjudge.data.scores import status_counts
from titjudge.metrics.catalog import repeat_metrics
from titjudge.metrics.protocols import ProtocolInput
from titjudge.records import ItemResult, RunEvaluation
from titjudge.records.item_line import item_lines
from titjudge.records.items import HumanPair, Item, RankRow, ScoreRow
from titjudge.records.pairs import PairVerdict, PairwiseRun
from titjudge.records.public_set import PublicSet
from titjudge.records.repeats import repeat_count, repeat_score_rows
from titjudge.records.run_record import RepeatSpreads, RunRecord, Spread, VariantRecord


@dataclass
class HumanData:
    pairs: list[HumanPair]
    ranks: list[RankRow]
    items: list[Item]
    #: the public set the data was imported from (its dataset.json), when it was
    dataset: PublicSet | None = None
    #: a ratings set's mean opinion score per image (its ratings.csv), for its measure
    ratings: dict[str, float] | None = None

    def protocol(self) -> ProtocolInput | None:
        """The set's own measure, where it publishes another number than the accuracy."""
        if self.dataset is None or self.dataset.measure == "pairwise":
            return None
        return ProtocolInput(self.dataset.measure, self.ratings)


def evaluate_run(
    results: Sequence[ItemResult],
    pairwise: Mapping[str, PairwiseRun],
    human: HumanData | None,
    variant_order: Sequence[str],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> RunEvaluation:
    """Everything the run writes, from the item results in any order and the pairwise runs."""
    ordered = attach_pairwise(
        sorted(results, key=lambda r: r.item.item_id), pairwise, variant_order
    )
    lines = list(item_lines(ordered))
    rows = [line.score_row() for line in lines]
    return RunEvaluation(
        results=ordered,
        lines=lines,
        metrics=_metrics(ordered, rows, human, bootstrap, seed, pairwise),
        pairwise=dict(pairwise),
        status_counts=status_counts(rows),
        n_failed_items=sum(1 for r in ordered if r.failed),
    )


def attach_pairwise(
    results: list[ItemResult], runs: Mapping[str, PairwiseRun], order: Sequence[str]
) -> list[ItemResult]:
    """Item results with each pairwise judge's per-item outcome (win rate) added, outcomes in
    config order. Without pairwise runs the results are returned as they are."""
    if not runs:
        return results
    from titjudge.metrics.pairwise_stats import item_outcomes

    ids = [r.item.item_id for r in results]
    per_judge = {name: item_outcomes(run, ids) for name, run in runs.items()}
    rank = {name: i for i, name in enumerate(order)}
    merged = []
    for result in results:
        outcomes = [*result.outcomes, *(found[result.item.item_id] for found in per_judge.values())]
        outcomes.sort(key=lambda o: rank.get(o.variant, len(rank)))
        merged.append(dataclasses.replace(result, outcomes=outcomes))
    return merged


def _metrics(
    results: Sequence[ItemResult],
    rows: list[ScoreRow],
    human: HumanData | None,
    bootstrap: int,
    seed: int,
    pairwise: Mapping[str, PairwiseRun],
) -> RunRecord | None:
    """Metrics per variant; None without human data (the run then only writes scores)."""
    if human is None or not human.pairs or not rows:
        return None
    from titjudge.metrics.summary import MetricSettings, metrics_record

    verdicts = {name: run.judgements for name, run in pairwise.items()}
    record = metrics_record(
        rows,
        human.pairs,
        human.ranks,
        human.items,
        verdicts=verdicts,
        settings=MetricSettings(bootstrap=bootstrap, seed=seed),
        protocol=human.protocol(),
    )
    for variant, found in _repeat_spreads(results, human, verdicts).items():
        if variant in record.variants:
            record.variants[variant].repeats = found
    return record


def _repeat_spreads(
    results: Sequence[ItemResult],
    human: HumanData,
    verdicts: Mapping[str, Sequence[PairVerdict]],
) -> dict[str, RepeatSpreads]:
    from titjudge.metrics.summary import MetricSettings, metrics_record

    ids = [r.item.item_id for r in results]
    by_variant: dict[str, list[Any]] = {}
    for result in results:
        for outcome in result.outcomes:
            by_variant.setdefault(outcome.variant, []).append(outcome)
    spreads = {}
    for variant, outcomes in by_variant.items():
        n = repeat_count(outcomes)
        if n < 2 or len(outcomes) != len(ids):
            continue
        own = {variant: verdicts[variant]} if variant in verdicts else {}
        per_repeat: list[VariantRecord] = [
            metrics_record(
                repeat_score_rows(ids, outcomes, variant, k),
                human.pairs,
                human.ranks,
                human.items,
                verdicts=own,
                sample=k,
                settings=MetricSettings(bootstrap=0),
            ).variants[variant]
            for k in range(n)
        ]
        spreads[variant] = RepeatSpreads(
            n=n,
            **{
                name: _spread([m.get(name) for m in per_repeat])
                for name in repeat_metrics()
                if any(_has(m, name) for m in per_repeat)
            },
        )
    return spreads


def repeat_spreads(
    results: Sequence[ItemResult],
    human: HumanData,
    verdicts: Mapping[str, Sequence[PairVerdict]],
) -> dict[str, RepeatSpreads]:
    """Each repeated judge's spread over its samples, as a run records it (`titjudge
    reproduce` computes it again from a pack's item lines)."""
    return _repeat_spreads(results, human, verdicts)


def _has(record: VariantRecord, name: str) -> bool:
    """Whether `metrics_record` gave the variant's record `name` (a field, a registered metric)."""
    return name in record.model_fields_set or name in (record.model_extra or {})


def _spread(values: list[float | None]) -> Spread | None:
    """mean, std (n-1; 0 for one value), min, max over the repeats where the metric is defined."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return None
    return Spread(
        mean=statistics.fmean(present),
        std=statistics.stdev(present) if len(present) > 1 else 0.0,
        min=min(present),
        max=max(present),
        values=values,
    )
