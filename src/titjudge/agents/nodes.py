"""The describer and judge steps for one chunk of items.

Every per-item error is caught here and becomes a failure record: one bad image or
one failed call never cancels the LangGraph step (which would cancel its siblings).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field

from titjudge.data.images import load_image
from titjudge.data.records import HumanPair, Item
from titjudge.errors import DataError
from titjudge.judges.base import Described, Judge, JudgeOutcome
from titjudge.judges.pairwise import PairwiseJudge, PairwiseRun
from titjudge.models.base import GenerateRequest, ImageInput
from titjudge.models.call import ModelClient
from titjudge.prompts.loader import PromptTemplate
from titjudge.records import ItemResult, Progress

log = logging.getLogger(__name__)


@dataclass
class RunContext:
    """What the nodes need; closed over by the graph, not stored in its state.

    `judges` score one item at a time; `pairwise` judges run after every item is
    described, over `pairs` (the run's human pairs; None: every pair within a prompt).
    """

    describer: ModelClient
    describe_template: PromptTemplate
    describe_max_tokens: int
    describe_temperature: float
    judges: list[Judge]
    fallbacks: dict[str, str] = field(default_factory=dict)
    progress: Progress = field(default_factory=Progress)
    pairwise: list[PairwiseJudge] = field(default_factory=list)
    pairs: list[HumanPair] | None = None
    #: judge names in config order: the order of every item's outcomes
    variant_order: list[str] = field(default_factory=list)
    #: keep descriptions cut at max_tokens (marked truncated) instead of failing them
    describe_keep_truncated: bool = False


async def describe_one(
    ctx: RunContext, item: Item
) -> tuple[ImageInput | None, Described, str | None]:
    """Load the image and describe it; never raises for item-level problems."""
    try:
        image = await asyncio.to_thread(load_image, item.image)
    except DataError as exc:
        return None, Described(text=None, error=f"image: {exc}"), str(exc)
    every = [*ctx.judges, *ctx.pairwise]
    if not any(judge.needs_description for judge in every) and every:
        return image, Described(text=None, error="not needed: no judge reads descriptions"), None
    system, user = ctx.describe_template.render()
    request = GenerateRequest(
        prompt=user,
        system=system,
        images=(image,),
        max_tokens=ctx.describe_max_tokens,
        temperature=ctx.describe_temperature,
    )
    call = await ctx.describer.text(
        request,
        role="describer",
        template=ctx.describe_template.record(),
        accept_truncated=ctx.describe_keep_truncated,
    )
    if not call.ok:
        return image, Described(text=None, call=call, error=call.error), None
    return image, Described(text=call.value, call=call), None


async def judge_one(
    ctx: RunContext, item: Item, image: ImageInput | None, described: Described
) -> list[JudgeOutcome]:
    outcomes = list(
        await asyncio.gather(*(_safe_judge(j, item, image, described) for j in ctx.judges))
    )
    return apply_fallbacks(outcomes, ctx.fallbacks)


async def _safe_judge(
    judge: Judge, item: Item, image: ImageInput | None, described: Described
) -> JudgeOutcome:
    try:
        return await judge.judge(item, image, described)
    except Exception as exc:  # a judge bug for one item must not cancel the chunk
        log.exception("judge %s crashed on item %s", judge.name, item.item_id)
        return JudgeOutcome.failed(judge.name, f"internal error: {type(exc).__name__}: {exc}")


def apply_fallbacks(outcomes: list[JudgeOutcome], fallbacks: dict[str, str]) -> list[JudgeOutcome]:
    """Replace a failed judge's score by its fallback's, marked `fallback` with the original error."""
    by_name = {o.variant: o for o in outcomes}
    for outcome in outcomes:
        backup_name = fallbacks.get(outcome.variant)
        backup = by_name.get(backup_name) if backup_name else None
        if outcome.status == "failed" and backup is not None and backup.status == "ok":
            outcome.status = "fallback"
            outcome.score = backup.score
            outcome.details["fallback_from"] = backup.variant
            outcome.rationale = f"[fallback to {backup.variant}] {backup.rationale or ''}".strip()
    return outcomes


def attach_pairwise(
    results: list[ItemResult], runs: dict[str, PairwiseRun], order: list[str]
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
