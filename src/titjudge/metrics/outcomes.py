"""Which human pairs a variant got right: the one place a variant's pair outcomes are made.

`metrics.summary.metrics_record` takes each variant's accuracy, tie rate, p-value, CI and McNemar
table from `variant_outcomes`; the analysis frames (`report.frames`), the breakdowns and
`titjudge compare` call the same function, so a pair's `correct` there is exactly that
pair's contribution to metrics.json's `pairwise_accuracy`, never a second reckoning.

A variant's outcomes come from its scores (`metrics.pairwise.pair_outcomes`) or, for a
pairwise judge, from its verdicts (`metrics.pairwise_stats.verdict_outcomes`); the
fallback rule (`metrics.fallback`) then leaves out the pairs that mix a judged score with a
fallback one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from titjudge.data.scores import scores_by_variant
from titjudge.metrics.fallback import FallbackMasks, fallback_masks, own_scores
from titjudge.metrics.pairwise import PairOutcomes, pair_outcomes
from titjudge.metrics.pairwise_stats import verdict_outcomes
from titjudge.metrics.tables import EvalData, build_eval_data
from titjudge.records.items import HumanPair, ScoreRow
from titjudge.records.pairs import PairVerdict


@dataclass(frozen=True)
class VariantOutcomes:
    """One variant's outcome per non-tie human pair, with the fallback rule applied."""

    outcomes: PairOutcomes
    #: the fallback rule's masks; None when the variant never fell back
    masks: FallbackMasks | None
    #: non-tie pairs the fallback rule left out (one side judged, the other fallen back)
    n_mixed: int


def variant_outcomes(
    vector: np.ndarray,
    statuses: Mapping[str, str],
    data: EvalData,
    judgements: Sequence[PairVerdict] | None = None,
    sample: int | None = None,
) -> VariantOutcomes:
    """Outcomes of a variant with score `vector` (aligned with `data.item_ids`, NaN = not
    scored) and item `statuses`; from `judgements` (sample `sample`) when it is a pairwise
    judge. A variant whose every score is its fallback's has none of its own (`own_scores`)."""
    vector = own_scores(vector, statuses)
    masks = fallback_masks(vector, statuses, data)
    if judgements is not None:
        outcome = verdict_outcomes(judgements, data, sample)
    else:
        outcome = pair_outcomes(vector, data)
    if masks is None:
        return VariantOutcomes(outcome, None, 0)
    keep = ~masks.mixed_pairs
    kept = PairOutcomes(outcome.evaluated & keep, outcome.correct & keep, outcome.metric_tie & keep)
    return VariantOutcomes(kept, masks, int(masks.mixed_pairs.sum()))


def run_outcomes(
    rows: Iterable[ScoreRow],
    pairs: Sequence[HumanPair],
    verdicts: Mapping[str, Sequence[PairVerdict]] | None = None,
    round_digits: int | None = None,
) -> tuple[EvalData, dict[str, VariantOutcomes]]:
    """Every variant's outcomes on `pairs` from its score rows (and verdicts), as `evaluate`
    makes them; the `EvalData` orders the non-tie pairs as `pairs` lists them."""
    rows = list(rows)
    verdicts = verdicts or {}
    by_variant = scores_by_variant(rows, round_digits)
    statuses: dict[str, dict[str, str]] = {}
    for row in rows:
        statuses.setdefault(row.variant, {})[row.item_id] = row.status
    data = build_eval_data(pairs, [])
    found = {
        name: variant_outcomes(
            data.score_vector(by_variant[name]), statuses[name], data, verdicts.get(name)
        )
        for name in sorted(by_variant)
    }
    return data, found
