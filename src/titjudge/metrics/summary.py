"""`metrics_record`: every metric for every variant, as the run record holds them
(`records.run_record.RunRecord`; metrics.json and `metrics --json` are its JSON).

Each number is computed once, here: a variant's pair outcomes (which human pairs it got
right, tied, skipped) come from its scores, or, for a pairwise judge, from its verdicts
(`verdicts=`), with the fallback rule applied (`metrics.fallback`), all made by
`metrics.outcomes.variant_outcomes` (which the analysis frames call too); accuracy, tie
rate, p-value, CI and the McNemar comparisons all read those same outcomes.

The record (undefined values are None, never NaN or 0)::

    RunRecord(version=RECORD_VERSION,
              variants={variant: VariantRecord(...per-variant fields below...)},
              thresholds=Thresholds(...),  # for the largest n_pairs of any variant
              leaderboard=Leaderboard(models, human, variants) | None,  # None without items
              comparisons=[Comparison(...)],  # exact McNemar, per pair of variants
              settings=Settings(bootstrap, bootstrap_unit, confidence, seed, gain, top_k,
                                round_digits, n_prompts, n_human_pairs, n_human_ties),
              notes=[str])

Per variant: pairwise_accuracy, n_pairs (non-tie pairs with both sides scored),
n_pairs_skipped (a side failed or unscored), n_correct, metric_tie_rate,
n_metric_ties, n_human_ties (excluded), p_value (exact one-sided binomial),
thresholds (for this variant's n_pairs), srcc, krcc, n_prompts, n_prompts_skipped,
ndcg, n_prompts_ndcg, n_prompts_skipped_ndcg, tie_calibrated_accuracy, tie_epsilon,
ci {pairwise_accuracy, metric_tie_rate, srcc, krcc, ndcg: [lo, hi] | None},
n_items (score rows), n_scored (ok + fallback), n_failed, n_fallback and, with a
manifest, leaderboard_srcc; accuracy_source (`scores` or `verdicts`). A variant that fell
back: n_pairs_mixed_source, n_fallback_unranked; one that fell back for every item it
scored has no number of its own (every metric None, `metrics.fallback.own_scores`). A
pairwise variant: `pairwise` (position bias and order agreement,
`metrics.pairwise_stats.position_bias`); its rank metrics and tie calibration read its win
rates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from titjudge.data.scores import scores_by_variant, status_counts
from titjudge.errors import DataError
from titjudge.metrics.bootstrap import mean_interval, ratio_interval, resample_counts
from titjudge.metrics.catalog import ci_metrics, metrics
from titjudge.metrics.compare import mcnemar_from_outcomes
from titjudge.metrics.correlation import prompt_correlations
from titjudge.metrics.fallback import own_scores
from titjudge.metrics.leaderboard import leaderboard_from_arrays
from titjudge.metrics.ndcg import GAINS, Gain, prompt_ndcg
from titjudge.metrics.outcomes import variant_outcomes
from titjudge.metrics.pairwise import PairOutcomes, calibrate_ties, summarise_outcomes
from titjudge.metrics.pairwise_stats import position_bias
from titjudge.metrics.protocols import ProtocolInput, protocol_score
from titjudge.metrics.significance import binomial_p_value, significance_thresholds
from titjudge.metrics.tables import EvalData, PromptValues, build_eval_data
from titjudge.records.items import HumanPair, Item, RankRow, ScoreRow
from titjudge.records.metric_values import finite_or_none
from titjudge.records.origins import StatusCounts
from titjudge.records.pairs import PairVerdict
from titjudge.records.run_record import RunRecord, Settings, VariantRecord


def _intervals(
    data: EvalData,
    outcomes: PairOutcomes,
    per_prompt: dict[str, PromptValues],
    counts: np.ndarray,
    confidence: float,
) -> dict[str, list[float] | None]:
    """Bootstrap interval of every metric the catalog gives one, as it says: a ratio over
    the evaluated pairs of the outcome mask it names, or a mean of per-prompt values (see
    bootstrap.py); both resample prompts with the same `counts`."""

    def per_prompt_sum(mask: np.ndarray) -> np.ndarray:
        return np.bincount(
            data.pair_prompt, weights=mask.astype(np.float64), minlength=data.n_prompts
        )

    evaluated = per_prompt_sum(outcomes.evaluated)
    found: dict[str, list[float] | None] = {}
    for metric in metrics():
        if metric.ci == "pairs":
            assert metric.outcome is not None
            mask = getattr(outcomes, metric.outcome)
            interval = ratio_interval(per_prompt_sum(mask), evaluated, counts, confidence)
        elif metric.ci == "prompts":
            interval = mean_interval(per_prompt[metric.name], counts, confidence)
        else:
            continue
        found[metric.name] = None if interval is None else list(interval)
    return found


@dataclass(frozen=True)
class MetricSettings:
    """How the metrics are computed (the record's `settings` says what was used)."""

    #: bootstrap resamples of prompts (0 = no intervals), drawn once with `seed` and shared
    #: by all variants
    bootstrap: int = 1000
    seed: int = 0
    gain: Gain = "linear"
    top_k: int | None = None
    #: scores rounded to this many decimals before comparing (defines metric ties)
    round_digits: int | None = None
    confidence: float = 0.95

    def check(self) -> None:
        """One DataError for a setting no metric can be computed with."""
        if self.gain not in GAINS:
            raise DataError(f"unknown gain {self.gain!r}; choose one of {', '.join(GAINS)}")
        if self.bootstrap < 0:
            raise DataError(f"--bootstrap must be >= 0, got {self.bootstrap}")
        if self.top_k is not None and self.top_k < 1:
            raise DataError(f"--top-k must be at least 1, got {self.top_k}")


@dataclass(frozen=True)
class _Shared:
    """What every variant's record is computed with: the human data's arrays, the settings
    and the bootstrap's resample counts (drawn once for all variants)."""

    data: EvalData
    settings: MetricSettings
    counts: np.ndarray


@dataclass
class _Variant:
    """What one variant's record is computed from: its rank vector and pair outcomes
    (kept for the leaderboard and the McNemar comparisons) and its record."""

    rank_vector: np.ndarray
    outcomes: PairOutcomes
    record: VariantRecord


def metrics_record(
    scores: Iterable[ScoreRow],
    pairs: Sequence[HumanPair],
    ranks: Sequence[RankRow],
    items: Sequence[Item] | None = None,
    *,
    verdicts: Mapping[str, Sequence[PairVerdict]] | None = None,
    sample: int | None = None,
    settings: MetricSettings = MetricSettings(),
    protocol: ProtocolInput | None = None,
) -> RunRecord:
    """All metrics for every variant in `scores` against human pairs and ranks, as the run
    record holds them (without provenance, which the run adds: `report.record`).

    `verdicts`: a pairwise judge's judgements by variant; that variant's pair outcomes come
    from them (sample `sample` of a repeated judge; None = the pair's verdict), its rank
    metrics from its scores (win rates). Without `items` there is no model per image, so the
    leaderboard is None and a note says why. `protocol`: the public set's own measure
    (`metrics.protocols`), computed for every variant scored by scores (a pairwise judge's
    verdicts are not scores to threshold or correlate: it has none).
    """
    settings.check()
    verdicts = verdicts or {}
    rows = list(scores)
    by_variant = scores_by_variant(rows, settings.round_digits)
    statuses = status_counts(rows)
    item_status: dict[str, dict[str, str]] = {}
    for row in rows:
        item_status.setdefault(row.variant, {})[row.item_id] = row.status
    data = build_eval_data(pairs, ranks)
    shared = _Shared(
        data, settings, resample_counts(data.n_prompts, settings.bootstrap, settings.seed)
    )
    found = {
        name: _variant(
            name,
            own_scores(data.score_vector(by_variant[name]), item_status[name]),
            item_status[name],
            statuses[name],
            verdicts.get(name),
            sample,
            shared,
        )
        for name in sorted(by_variant)
    }
    variants = {name: v.record for name, v in found.items()}
    if protocol is not None:
        for name, variant in found.items():
            if name in verdicts:
                continue
            own = {i: s for i, s in by_variant[name].items() if item_status[name][i] == "ok"}
            variants[name].protocol = protocol_score(protocol, variant.rank_vector, data, own)
    largest = max((v.n_pairs for v in variants.values()), default=0)
    notes: list[str] = []
    board = None
    if items is None:
        notes.append("leaderboard omitted: it needs each image's t2i_model (pass --manifest)")
    else:
        board = leaderboard_from_arrays({n: v.rank_vector for n, v in found.items()}, data, items)
        for name in found:
            variants[name].leaderboard_srcc = board.variants[name].srcc
    return RunRecord(
        variants=variants,
        thresholds=significance_thresholds(largest),
        leaderboard=board,
        comparisons=[
            mcnemar_from_outcomes(a, found[a].outcomes, b, found[b].outcomes)
            for a, b in combinations(sorted(found), 2)
        ],
        settings=Settings(
            **asdict(settings),
            bootstrap_unit="prompt",
            n_prompts=data.n_prompts,
            n_human_pairs=int(data.pair_winner.size),
            n_human_ties=data.n_human_ties,
        ),
        notes=notes,
    )


def _variant(
    name: str,
    vector: np.ndarray,
    item_status: dict[str, str],
    status: StatusCounts,
    verdicts: Sequence[PairVerdict] | None,
    sample: int | None,
    shared: _Shared,
) -> _Variant:
    """One variant's record from its score vector (its own scores, the fallback rule applied)
    or, for a pairwise judge, its verdicts."""
    data, settings = shared.data, shared.settings
    found = variant_outcomes(vector, item_status, data, verdicts, sample)
    masks, n_mixed, outcome = found.masks, found.n_mixed, found.outcomes
    rank_vector = vector if masks is None else masks.rank_vector
    pairwise = summarise_outcomes(outcome, data.n_human_ties)
    srcc, krcc = prompt_correlations(rank_vector, data)
    ndcg = prompt_ndcg(rank_vector, data, settings.gain, settings.top_k)
    calibration = calibrate_ties(
        vector,
        data,
        None if masks is None else masks.mixed_pairs,
        None if masks is None else masks.mixed_ties,
    )
    per_prompt = {"srcc": srcc, "krcc": krcc, "ndcg": ndcg}
    added = {m: m.per_prompt(rank_vector, data) for m in metrics() if m.per_prompt}
    per_prompt.update({metric.name: values for metric, values in added.items()})
    fields: dict[str, Any] = {
        "pairwise_accuracy": pairwise.accuracy,
        "n_pairs": pairwise.n_pairs,
        "n_pairs_skipped": pairwise.n_pairs_skipped - n_mixed,
        "n_correct": pairwise.n_correct,
        "metric_tie_rate": pairwise.metric_tie_rate,
        "n_metric_ties": pairwise.n_metric_ties,
        "n_human_ties": pairwise.n_human_ties,
        "p_value": binomial_p_value(pairwise.n_correct, pairwise.n_pairs),
        "thresholds": significance_thresholds(pairwise.n_pairs),
        "accuracy_source": "verdicts" if verdicts is not None else "scores",
        "srcc": srcc.mean,
        "krcc": krcc.mean,
        "n_prompts": srcc.n_prompts,
        "n_prompts_skipped": srcc.n_skipped,
        "ndcg": ndcg.mean,
        "n_prompts_ndcg": ndcg.n_prompts,
        "n_prompts_skipped_ndcg": ndcg.n_skipped,
        "tie_calibrated_accuracy": calibration.accuracy,
        "tie_epsilon": calibration.epsilon,
        "ci": (
            _intervals(data, outcome, per_prompt, shared.counts, settings.confidence)
            if settings.bootstrap
            else dict.fromkeys(ci_metrics())
        ),
        "n_items": status.total,
        "n_scored": status.scored,
        "n_failed": status.failed,
        "n_fallback": status.fallback,
    }
    for metric, values in added.items():  # metrics registered in the catalog
        fields[metric.name] = finite_or_none(values.mean)
        if metric.stands_on is not None:
            fields[metric.stands_on.name] = values.n_prompts
    if masks is not None:
        fields["n_pairs_mixed_source"] = masks.n_mixed
        fields["n_fallback_unranked"] = masks.n_fallback
    if verdicts is not None:
        fields["pairwise"] = position_bias(verdicts)
    return _Variant(rank_vector, outcome, VariantRecord(**fields))


__all__ = ["MetricSettings", "metrics_record"]
