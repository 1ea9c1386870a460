"""The audit's data model: every human pair joined with each variant's scores and verdict.

Built from a run dir by `audit_load.load_audit`. No I/O, HTML or terminal code here, so
the page and the terminal views show the same facts, and tests can pin them.

Per (pair, variant) the outcome is the one the variant's metrics counted (so the counts
match the run record's n_correct and n_metric_ties):
- `agree`: the variant scores the human-preferred image strictly higher;
- `disagree`: it scores the other image strictly higher;
- `metric_tie`: equal scores (after the run's `round_digits`, as in metrics.json);
- `failed`: the pair was not evaluated: either side has no score (status `failed`, or
  absent from the run), or (the fallback rule, `metrics.fallback`) one side's score is the
  fallback judge's, another scale, or every score of the variant is its fallback's (it has
  none of its own);
- `human_tie`: humans called the pair a tie, so there is nothing to agree with.
A pairwise judge is classified from its verdict on the pair (`classify_judged`), never from
its per-image win rates: the verdict names the preferred image (agree), the other
(disagree), or is a tie (both orders tied, or the orders disagreed: metric_tie); the pair's
`judged` keeps each order's choice and rationale.
The margin is score(preferred) - score(other) (negative = a mistake; for human ties,
score(a) - score(b)); for a pairwise judge +1 (agree), -1 (disagree), 0 (tie). "Most confident mistakes first" is the margin ascending (see
`sort_key`; the page's script implements the same order).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from titjudge.errors import DataError, did_you_mean
from titjudge.records.calls import Usage
from titjudge.records.item_line import ItemLine
from titjudge.records.items import HumanPair
from titjudge.records.metric_values import PositionBias
from titjudge.records.origins import VariantOrigin
from titjudge.records.pairs import PairVerdict
from titjudge.records.percent import percent
from titjudge.records.provenance import ModelAnswers
from titjudge.records.run_record import Provenance, RunRecord

Outcome = Literal["agree", "disagree", "metric_tie", "failed", "human_tie"]
OUTCOMES: tuple[Outcome, ...] = ("agree", "disagree", "metric_tie", "failed", "human_tie")
#: sort groups: scored non-tie pairs by margin, then human ties, then failed pairs
_GROUP: dict[Outcome, int] = {
    "disagree": 0,
    "metric_tie": 0,
    "agree": 0,
    "human_tie": 1,
    "failed": 2,
}


def describer_error(line: ItemLine) -> str | None:
    """Why the describer failed on the line's image; None when it did not (ok, or skipped
    because no judge reads descriptions)."""
    return line.describer.error if line.describer.status == "failed" else None


@dataclass(frozen=True)
class AuditItem:
    """One image of the run with its prompt and each variant's items.jsonl line."""

    item_id: str
    prompt_id: str
    t2i_model: str
    image: str
    results: Mapping[str, ItemLine]
    describer_cost: float | None = None


@dataclass(frozen=True)
class AuditVerdict:
    """One variant's view of one human pair."""

    outcome: Outcome
    score_a: float | None
    score_b: float | None
    margin: float | None
    #: a pairwise judge's verdict on the pair, both orders with their rationales
    judged: PairVerdict | None = None


@dataclass(frozen=True)
class AuditPair:
    """A human pair and, per variant, the verdict; `index` orders the run's pairs as in pairs.csv."""

    index: int
    pair: HumanPair
    verdicts: Mapping[str, AuditVerdict]

    @property
    def pair_id(self) -> str:
        return self.pair.pair_id


@dataclass(frozen=True)
class VariantSummary:
    """Headline numbers of one variant: metrics.json's where present, our counts always."""

    name: str
    pairwise_accuracy: float | None
    ci: tuple[float, float] | None
    metric_tie_rate: float | None
    n_failed: int
    n_fallback: int
    cost: float | None
    counts: Mapping[Outcome, int]
    scale: float
    #: where the numbers came from (kind, model asked for and answering, template sha256)
    provenance: Provenance | None = None
    #: "scores" or "verdicts" (a pairwise judge)
    accuracy_source: str = "scores"
    #: a pairwise judge's position bias and order agreement (the record's `pairwise`)
    position: PositionBias | None = None
    #: where its scores came from and whether its model was stopped (`RunRecord.origin`;
    #: None: the run did not record it)
    origin: VariantOrigin | None = None

    def fallback_text(self) -> str:
        """Its fallback items with their share of its scores: `48 (100%)`; the count alone
        where the share is not recorded."""
        if not self.n_fallback or self.origin is None:
            return str(self.n_fallback)
        return f"{self.n_fallback} ({self.origin.percent()})"

    def origin_note(self) -> str | None:
        """The line saying where its scores came from and that its model was stopped."""
        return self.origin.note(self.name) if self.origin is not None else None


@dataclass(frozen=True)
class AuditData:
    """Everything the audit views show about one run."""

    run_dir: Path
    name: str
    variants: list[str]
    items: dict[str, AuditItem]
    prompts: dict[str, str]
    pairs: list[AuditPair]
    summaries: dict[str, VariantSummary]
    n_pairs_outside: int
    #: summary.json's `usage`: per role, the calls, tokens and cost
    usage: dict[str, Usage]
    #: summary.json's `answered_by`: per configured model, the models that answered
    answered_by: dict[str, ModelAnswers] = field(default_factory=dict)
    #: the run's record (metrics.json): every number the views show comes from it
    record: RunRecord = field(default_factory=RunRecord)


# --------------------------------------------------------------------------- classification


def classify(
    pair: HumanPair,
    result_a: ItemLine | None,
    result_b: ItemLine | None,
    round_digits: int | None = None,
) -> AuditVerdict:
    """The verdict of one variant on one human pair (see the module docstring)."""
    score_a = result_a.score if result_a is not None and result_a.status != "failed" else None
    score_b = result_b.score if result_b is not None and result_b.status != "failed" else None
    if score_a is None or score_b is None:
        return AuditVerdict("failed", score_a, score_b, None)
    a = score_a if round_digits is None else round(score_a, round_digits)
    b = score_b if round_digits is None else round(score_b, round_digits)
    if pair.winner == "tie":
        return AuditVerdict("human_tie", score_a, score_b, a - b)
    margin = a - b if pair.winner == "a" else b - a
    outcome: Outcome = "agree" if margin > 0 else "disagree" if margin < 0 else "metric_tie"
    return AuditVerdict(outcome, score_a, score_b, margin)


def classify_judged(pair: HumanPair, judged: PairVerdict | None) -> AuditVerdict:
    """A pairwise judge's outcome on one human pair, from its verdict (module docstring)."""
    if judged is None or judged.verdict is None:
        return AuditVerdict("failed", None, None, None, judged)
    if pair.winner == "tie":
        return AuditVerdict("human_tie", None, None, None, judged)
    preferred = judged.verdict if judged.item_a == pair.item_a else _swap(judged.verdict)
    if preferred == "tie":
        return AuditVerdict("metric_tie", None, None, 0.0, judged)
    agree = preferred == pair.winner
    return AuditVerdict(
        "agree" if agree else "disagree", None, None, 1.0 if agree else -1.0, judged
    )


def _swap(verdict: str) -> str:
    return {"a": "b", "b": "a"}.get(verdict, verdict)


def sort_key(verdict: AuditVerdict, scale: float = 1.0) -> tuple[int, float]:
    """Most confident mistakes first: scored pairs by margin/scale ascending; then human ties,
    widest score gap first (the variant is most sure where humans saw none); then failures."""
    group = _GROUP[verdict.outcome]
    if verdict.margin is None:
        return group, 0.0
    if verdict.outcome == "human_tie":
        return group, -abs(verdict.margin) / scale
    return group, verdict.margin / scale


def any_variant_key(audit_pair: AuditPair, scales: Mapping[str, float]) -> tuple[int, float]:
    """Across variants: the pair's worst scale-free key (its most confident mistake)."""
    return min(sort_key(v, scales.get(name, 1.0)) for name, v in audit_pair.verdicts.items())


def sorted_pairs(
    data: AuditData, pairs: Iterable[AuditPair], variant: str | None
) -> list[AuditPair]:
    """Most confident mistakes first for `variant` (None: across variants, margins / scale)."""
    if variant is None:
        scales = {name: s.scale for name, s in data.summaries.items()}
        return sorted(pairs, key=lambda p: (*any_variant_key(p, scales), p.index))
    check_variant(data, variant)
    return sorted(pairs, key=lambda p: (*sort_key(p.verdicts[variant]), p.index))


def filter_pairs(
    data: AuditData,
    variant: str | None = None,
    outcome: Outcome | None = None,
    t2i_model: str | None = None,
    prompt_id: str | None = None,
) -> list[AuditPair]:
    """The page's filters: outcome of `variant` (None: of any variant), model on either side."""
    if variant is not None:
        check_variant(data, variant)
    names = data.variants if variant is None else [variant]
    found = []
    for audit_pair in data.pairs:
        pair = audit_pair.pair
        if prompt_id is not None and pair.prompt_id != prompt_id:
            continue
        if t2i_model is not None and t2i_model not in (
            data.items[pair.item_a].t2i_model,
            data.items[pair.item_b].t2i_model,
        ):
            continue
        if outcome is not None and all(audit_pair.verdicts[n].outcome != outcome for n in names):
            continue
        found.append(audit_pair)
    return found


def disagreements(
    data: AuditData, variant: str | None = None, limit: int | None = None
) -> list[AuditPair]:
    """Pairs the variant (None: any variant) gets wrong, most confident mistakes first."""
    if limit is not None and limit < 1:
        raise DataError(f"--limit must be at least 1, got {limit}")
    found = sorted_pairs(data, filter_pairs(data, variant, "disagree"), variant)
    return found if limit is None else found[:limit]


def ok_scores(data: AuditData, variant: str) -> list[float]:
    """The variant's scores on items where it judged (status ok): a run's mean score per
    variant, without fallback scores (another judge's scale) or failures."""
    return [
        r.score
        for item in data.items.values()
        if (r := item.results.get(variant)) is not None and r.status == "ok" and r.score is not None
    ]


def check_variant(data: AuditData, variant: str) -> None:
    if variant not in data.variants:
        raise DataError(
            f"{data.run_dir}: run has no variant {variant!r}{did_you_mean(variant, data.variants)}; "
            f"variants: {', '.join(data.variants)}"
        )


def find_pair(data: AuditData, pair_id: str) -> AuditPair:
    """The pair `a|b` (either order), or a DataError naming the closest id."""
    item_a, sep, item_b = pair_id.partition("|")
    if not sep:
        raise DataError(
            f"pair id {pair_id!r}: expected '<item_a>|<item_b>' as in `audit --disagreements`"
        )
    for audit_pair in data.pairs:
        if {audit_pair.pair.item_a, audit_pair.pair.item_b} == {item_a, item_b}:
            return audit_pair
    ids = [p.pair_id for p in data.pairs]
    raise DataError(
        f"{data.run_dir}: no human pair {pair_id!r} in this run{did_you_mean(pair_id, ids)}"
    )


def score_scale(scores: Iterable[float]) -> float:
    """Spread of a variant's scores (population sd), so margins of unlike scales compare; 1 if flat."""
    values = [s for s in scores if math.isfinite(s)]
    if len(values) < 2:
        return 1.0
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return sd if sd > 0 else 1.0


# --------------------------------------------------------------------------- provenance lines


def provenance_line(name: str, data: AuditData) -> str:
    """'tit_llm: llm, asked litellm:openai/judge, answered by judge; template ... (sha256 ...)'."""
    summary = data.summaries[name]
    found = summary.provenance
    if found is None:
        return f"{name}: provenance not recorded (run written before titjudge recorded it)"
    parts = [found.kind or "?", f"asked {found.model or '(no model)'}"]
    parts.append(f"answered by {', '.join(found.answered_by) or '(not recorded)'}")
    if found.template:
        parts.append(f"template {found.template} (sha256 {found.template_sha256})")
    if found.thinking:
        parts.append(f"thinking {found.thinking}")
    if found.sampling:
        parts.append(", ".join(f"{k} {v}" for k, v in found.sampling.items()))
    if found.fallback:
        parts.append(f"falls back to {found.fallback}")
    parts.append(f"accuracy from {summary.accuracy_source}")
    return f"{name}: " + "; ".join(parts)


def position_line(name: str, position: PositionBias) -> str:
    """A pairwise judge's position bias and order agreement, from the run record."""
    p_value = position.position_bias_p_value
    return (
        f"{name} position: the first-shown image won {position.n_first_wins} and the "
        f"second {position.n_second_wins} of {position.n_decisive} decisive "
        f"single-order verdicts (first {percent(position.first_position_win_share)}"
        + (f", p {p_value:.3g}" if p_value is not None else "")
        + f"); the two orders agreed on {percent(position.order_agreement_rate)} of "
        f"{position.n_pairs_both_orders} pairs"
    )
