"""`kind: jury`: the run's judges combined, weighted by how often each agreed with the people on
pairs the jury is not then scored on.

    judges:
      - {name: tit_llm, kind: llm, model: ...}
      - {name: tit_score, kind: embedding, model: ...}
      - {name: jury, kind: jury, members: [tit_llm, tit_score], folds: 5}

No model call: once every item and every pairwise judge is done, the jury reads its members'
answers from the run's own results. Each member's view of a human pair is the image it
prefers: a per-item judge's higher score (its own scores only: an item scored by its
fallback gives that member no view of the pair, another scale), a pairwise judge's verdict;
equal scores or a tied verdict is no preference.

Cross-validation grouped by prompt: the prompts that have human pairs are shuffled with the
run's seed and dealt round-robin into `folds` folds (every pair of a prompt in one fold, so
no prompt is in both a fit and its test fold). For each fold, every member's weight is fitted
on the other folds' non-tie human pairs: the log-odds of its smoothed accuracy there,
w = max(0, ln((c + 1) / (n - c + 1))), c of its n preferences that matched the people's
(a member no better than chance gets 0: it is never turned around). The fold's pairs are
then decided by the weighted vote: sum of w times +1 (prefers image a), -1 (image b) or 0;
its sign is the jury's verdict, 0 a tie. Every human pair is decided once, by weights fitted
without its prompt: the jury's accuracy (and its CI, and the paired tests against each
member in metrics.json's comparisons) is computed on held-out pairs only, from these
verdicts, as any pairwise judge's is. Each verdict's rationale names its fold, the weights
and the members' votes; the whole fit (folds, their prompts, weights, training counts) is
`jury_<name>.json` in the run dir.

Too few to fit (fewer than MIN_PAIRS non-tie human pairs, or fewer than two prompts with
them), or a member with no preference on any human pair (every score failed, from its
fallback, or tied): every pair fails with that reason, and the jury has no accuracy.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from titjudge.judges.base import Judge
from titjudge.judges.building import Building
from titjudge.judges.options import JudgeOptions
from titjudge.judges.registry import judge_kind
from titjudge.models.core.clients import CallMode
from titjudge.records import ItemResult
from titjudge.records.items import HumanPair
from titjudge.records.outcomes import JudgeInput, JudgeOutcome
from titjudge.records.pairs import OrderVerdict, PairVerdict, PairwiseRun

#: the fewest non-tie human pairs a jury is fitted on
MIN_PAIRS = 10
Side = Literal["a", "b"]


class JuryJudgeConfig(JudgeOptions):
    """A weighted vote of other judges of the run, fitted to the people by cross-validation
    grouped by prompt (no model call of its own)."""

    scores_per_item: ClassVar[bool] = False
    kind: Literal["jury"]
    members: list[str] = Field(min_length=2, description="the judges it combines, by name")
    folds: int = Field(5, ge=2, le=50, description="cross-validation folds, grouped by prompt")

    @model_validator(mode="after")
    def _members(self) -> JuryJudgeConfig:
        if self.fallback is not None:
            raise ValueError(f"judge {self.name!r}: a jury takes no fallback")
        if self.name in self.members:
            raise ValueError(f"jury {self.name!r} names itself as a member")
        repeated = sorted({m for m in self.members if self.members.count(m) > 1})
        if repeated:
            raise ValueError(f"jury {self.name!r} names {', '.join(repeated)} twice")
        return self


class JuryJudge(Judge):
    """A jury: nothing per item; its verdicts come from `decide_jury` once the run's members
    are done."""

    per_item = False
    needs_description = False

    def __init__(self, config: JuryJudgeConfig):
        super().__init__(config)
        self.members = list(config.members)
        self.folds = config.folds

    def kind_facts(self) -> dict[str, Any]:
        return {"members": self.members, "folds": self.folds, "method": "weighted vote, log-odds"}

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        raise RuntimeError("a jury scores pairs after the run, never an item")  # never called


@judge_kind("jury", config=JuryJudgeConfig, label="Jury", label_several="Jury-{model}")
def build_jury(config: JuryJudgeConfig, building: Building) -> Judge:
    return JuryJudge(config)


def member_views(
    results: Sequence[ItemResult],
    pairwise: Mapping[str, PairwiseRun],
    pairs: Sequence[HumanPair],
    members: Sequence[str],
) -> dict[str, dict[tuple[str, str], Side | None]]:
    """Per member, per pair (item_a, item_b): the image it prefers, or None (no view: failed,
    from a fallback, tied, or not in the run)."""
    scores: dict[str, dict[str, float]] = {m: {} for m in members}
    for result in results:
        for outcome in result.outcomes:
            if outcome.variant in scores and outcome.status == "ok" and outcome.score is not None:
                scores[outcome.variant][result.item.item_id] = outcome.score
    views: dict[str, dict[tuple[str, str], Side | None]] = {}
    for member in members:
        found: dict[tuple[str, str], Side | None] = {}
        verdicts = (
            {(v.item_a, v.item_b): v.verdict for v in pairwise[member].judgements}
            if member in pairwise
            else None
        )
        for pair in pairs:
            key = (pair.item_a, pair.item_b)
            if verdicts is not None:
                said = verdicts.get(key)
                found[key] = said if said in ("a", "b") else None
                continue
            a, b = scores[member].get(pair.item_a), scores[member].get(pair.item_b)
            found[key] = None if a is None or b is None or a == b else ("a" if a > b else "b")
        views[member] = found
    return views


def deal_folds(prompts: Sequence[str], folds: int, seed: int) -> list[list[str]]:
    """The prompts shuffled with `seed` (from their sorted order) and dealt round-robin into
    at most `folds` folds."""
    order = sorted(set(prompts))
    random.Random(seed).shuffle(order)
    count = min(folds, len(order))
    return [sorted(order[k::count]) for k in range(count)]


def weight(correct: int, given: int) -> float:
    """A member's weight from its training pairs: the log-odds of its smoothed accuracy,
    never below 0."""
    return max(0.0, math.log((correct + 1) / (given - correct + 1)))


def decide_jury(
    jury: JuryJudge,
    results: Sequence[ItemResult],
    pairwise: Mapping[str, PairwiseRun],
    pairs: Sequence[HumanPair],
    seed: int,
) -> PairwiseRun:
    """The jury's held-out verdict on every human pair, and its fit (`PairwiseRun.fit`)."""
    views = member_views(results, pairwise, pairs, jury.members)
    decided = [p for p in pairs if p.winner != "tie"]
    prompts = sorted({p.prompt_id for p in decided})
    fit: dict[str, Any] = {
        "members": jury.members,
        "method": "weighted vote: weight = max(0, ln((correct + 1) / (wrong + 1))) per member, "
        "fitted on the other folds' non-tie human pairs",
        "seed": seed,
        "n_pairs": len(decided),
        "n_prompts": len(prompts),
        "folds": [],
    }
    silent = [m for m in jury.members if not any(views[m][(p.item_a, p.item_b)] for p in decided)]
    reason = None
    if len(decided) < MIN_PAIRS or len(prompts) < 2:
        reason = (
            f"too few human pairs to fit a jury: {len(decided)} non-tie pairs over "
            f"{len(prompts)} prompts (it needs at least {MIN_PAIRS} pairs and 2 prompts)"
        )
    elif silent:
        reason = (
            f"jury member {silent[0]!r} has no preference on any human pair (its every score "
            "failed, came from its fallback or tied): nothing to weigh"
        )
    if reason is not None:
        fit["fitted"] = False
        fit["reason"] = reason
        verdicts = [_verdict(p, None, reason) for p in pairs]
        return PairwiseRun(judge=jury.name, repeats=1, judgements=verdicts, fit=fit)
    fold_of = {}
    dealt = deal_folds(prompts, jury.folds, seed)
    for number, members in enumerate(dealt):
        fold_of.update(dict.fromkeys(members, number))
    verdicts = []
    fitted = []
    for number, held in enumerate(dealt):
        train = [p for p in decided if fold_of[p.prompt_id] != number]
        weights, counts = {}, {}
        for member in jury.members:
            given = [(views[member][(p.item_a, p.item_b)], p.winner) for p in train]
            said = [(v, w) for v, w in given if v is not None]
            correct = sum(1 for v, w in said if v == w)
            weights[member] = weight(correct, len(said))
            counts[member] = {"correct": correct, "given": len(said)}
        fitted.append(
            {
                "fold": number + 1,
                "prompts": held,
                "weights": weights,
                "training": counts,
                "n_train_pairs": len(train),
            }
        )
        for pair in (p for p in pairs if fold_of.get(p.prompt_id) == number):
            votes = {m: views[m][(pair.item_a, pair.item_b)] for m in jury.members}
            total = sum(
                weights[m] * (1 if v == "a" else -1 if v == "b" else 0) for m, v in votes.items()
            )
            side = "a" if total > 0 else "b" if total < 0 else "tie"
            shown = ", ".join(
                f"{m} {weights[m]:.3f} x {votes[m] or 'no view'}" for m in jury.members
            )
            why = (
                f"fold {number + 1} of {len(dealt)} (weights fitted on {len(train)} pairs of the "
                f"other folds' prompts): {shown}; sum {total:+.3f} -> {side}"
            )
            verdicts.append(_verdict(pair, side, why))
    for pair in pairs:  # a human tie of a prompt with no decided pair: no fold holds it
        if pair.prompt_id not in fold_of:
            verdicts.append(_verdict(pair, "tie", "no fold: its prompt has no non-tie pair"))
    fit["fitted"] = True
    fit["folds"] = fitted
    return PairwiseRun(judge=jury.name, repeats=1, judgements=verdicts, fit=fit)


def _verdict(pair: HumanPair, side: str | None, why: str) -> PairVerdict:
    """A jury's verdict as both orders of a pair (the same decision either way round)."""
    forward: Any = {"a": "first", "b": "second", "tie": "tie"}.get(side or "")
    backward: Any = {"a": "second", "b": "first", "tie": "tie"}.get(side or "")
    error = why if side is None else None
    rationale = None if side is None else why
    return PairVerdict(
        prompt_id=pair.prompt_id,
        item_a=pair.item_a,
        item_b=pair.item_b,
        human=pair.winner,
        forward=_order(pair.item_a, pair.item_b, forward, rationale, error),
        backward=_order(pair.item_b, pair.item_a, backward, rationale, error),
    )


def _order(
    first: str, second: str, choice: Any, rationale: str | None, error: str | None
) -> OrderVerdict:
    return OrderVerdict(
        first=first,
        second=second,
        choice=choice,
        samples=[choice],
        rationale=rationale,
        error=error,
    )


__all__ = [
    "MIN_PAIRS",
    "JuryJudge",
    "JuryJudgeConfig",
    "deal_folds",
    "decide_jury",
    "member_views",
    "weight",
]
