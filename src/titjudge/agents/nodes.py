"""The per-item graph: describe -> judge -> (fallback, only when needed) for one item.

Every per-item error is caught inside these nodes and becomes a failure record: one bad
image or one failed call never cancels a LangGraph step (which would cancel its siblings).
What the nodes need comes from the run context (`Runtime[RunContext]`), never from the
graph's state, which holds only this item's own data.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from titjudge.data.images import load_image
from titjudge.data.records import HumanPair, Item
from titjudge.errors import DataError
from titjudge.judges.base import Described, Judge, JudgeOutcome
from titjudge.judges.pairwise import PairwiseJudge
from titjudge.metrics.evaluate import HumanData
from titjudge.models.base import GenerateRequest, ImageInput
from titjudge.models.call import ModelClient
from titjudge.prompts.loader import PromptTemplate
from titjudge.records import ItemResult, Progress

log = logging.getLogger(__name__)


@dataclass
class RunContext:
    """The run's fixed inputs, handed to every node as LangGraph's run context.

    `judges` score one item at a time; `pairwise` judges run after every item is
    described, over `pairs` (the run's human pairs; None: every pair within a prompt).
    `human`, `bootstrap` and `seed` are the evaluator's.
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
    human: HumanData | None = None
    bootstrap: int = 1000
    seed: int = 0


class ItemState(TypedDict, total=False):
    item: Item
    image: ImageInput | None
    image_error: str | None
    described: Described
    outcomes: list[JudgeOutcome]


async def describe(state: ItemState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Load the image and describe it; a description no judge reads is skipped."""
    ctx, item = runtime.context, state["item"]
    try:
        image = await asyncio.to_thread(load_image, item.image)
    except DataError as exc:
        failed = Described(text=None, error=f"image: {exc}")
        return {"image": None, "described": failed, "image_error": str(exc)}
    every = [*ctx.judges, *ctx.pairwise]
    if every and not any(judge.needs_description for judge in every):
        return {"image": image, "described": Described.skipped(), "image_error": None}
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
        described = Described(text=None, call=call, error=call.error)
    else:
        described = Described(text=call.value, call=call)
    return {"image": image, "described": described, "image_error": None}


async def judge(state: ItemState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Every per-item judge on this item, concurrently."""
    item, image, described = state["item"], state.get("image"), state["described"]
    outcomes = await asyncio.gather(
        *(_safe_judge(j, item, image, described) for j in runtime.context.judges)
    )
    return {"outcomes": list(outcomes)}


async def _safe_judge(
    judge: Judge, item: Item, image: ImageInput | None, described: Described
) -> JudgeOutcome:
    try:
        return await judge.judge(item, image, described)
    except Exception as exc:  # a judge bug for one item must not cancel its siblings
        log.exception("judge %s crashed on item %s", judge.name, item.item_id)
        return JudgeOutcome.failed(judge.name, f"internal error: {type(exc).__name__}: {exc}")


async def route_fallback(state: ItemState, runtime: Runtime[RunContext]) -> str:
    """To `fallback` only when a judge that has a configured fallback failed."""
    fallbacks = runtime.context.fallbacks
    needed = any(o.status == "failed" and o.variant in fallbacks for o in state["outcomes"])
    return "fallback" if needed else END


async def fallback(state: ItemState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    return {"outcomes": apply_fallbacks(state["outcomes"], runtime.context.fallbacks)}


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


def build_item_graph() -> Any:
    """Compile the per-item graph (describe -> judge -> fallback when needed -> END)."""
    graph = StateGraph(ItemState, context_schema=RunContext)
    graph.add_node("describe", describe)
    graph.add_node("judge", judge)
    graph.add_node("fallback", fallback)
    graph.add_edge(START, "describe")
    graph.add_edge("describe", "judge")
    graph.add_conditional_edges("judge", route_fallback, ["fallback", END])
    graph.add_edge("fallback", END)
    return graph.compile()


def item_result(state: dict[str, Any]) -> ItemResult:
    """The per-item graph's final state as the run's record (image bytes left behind)."""
    return ItemResult(
        item=state["item"],
        described=state["described"],
        outcomes=state.get("outcomes", []),
        image_error=state.get("image_error"),
    )
