"""The item graph: describe -> judge -> (fallback, only when needed) for each item, in a loop.

One run of this graph is one worker: it takes an item, routes it through describe, judge
and (only when a judge with a fallback failed) fallback, and the node that finishes the
item records its result and takes the worker's next item from the shared feed, routing
back to describe, or to END when the feed is empty. Routing from judge and fallback is a
`Command` with declared destinations, so an item costs two LangGraph steps (three with a
fallback) and no state copy for a routing function. A run with no feed scores one item.

Every per-item error is caught inside these nodes and becomes a failure record: one bad
image or one failed call never cancels a LangGraph step (which would cancel its siblings).
What the nodes need comes from the run context (`Runtime[RunContext]`), never from the
graph's state, which holds only this item's own data.
"""

from __future__ import annotations

import asyncio
import logging
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from titjudge.cache.store import CacheError
from titjudge.data.images import ImageLoader
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

#: LangGraph steps one item takes at most (describe, judge, fallback): a worker's recursion
#: limit is this times the items it may run
STEPS_PER_ITEM = 3


@dataclass
class RunContext:
    """The run's fixed inputs, handed to every node as LangGraph's run context.

    `judges` score one item at a time; `pairwise` judges run after every item is
    described, over `pairs` (the run's human pairs; None: every pair within a prompt).
    `human`, `bootstrap` and `seed` are the evaluator's. `images` loads every worker's
    images, bounding the decodes in flight (the runner's holds `run.concurrency`).
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
    images: ImageLoader = field(default_factory=lambda: ImageLoader(concurrency=1))


class ItemState(TypedDict, total=False):
    #: the worker's items still to run (shared with the other workers); absent: one item
    feed: Iterator[Item]
    item: Item
    image: ImageInput | None
    image_error: str | None
    described: Described
    outcomes: list[JudgeOutcome]
    #: this worker's finished items, in completion order
    results: Annotated[list[ItemResult], operator.add]


async def describe(state: ItemState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Load the image and describe it; a description no judge reads is skipped. The item
    counts as described once this returns, whatever the outcome."""
    update = await _describe(state["item"], runtime.context)
    runtime.context.progress.item_described()
    return update


async def _describe(item: Item, ctx: RunContext) -> dict[str, Any]:
    try:
        image = await ctx.images.load(item.image)
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


async def judge(state: ItemState, runtime: Runtime[RunContext]) -> Command[str]:
    """Every per-item judge on this item, concurrently; then to `fallback` only when a judge
    that has a configured fallback failed, else the item is done."""
    item, image, described = state["item"], state.get("image"), state["described"]
    outcomes = list(
        await asyncio.gather(
            *(_safe_judge(j, item, image, described) for j in runtime.context.judges)
        )
    )
    fallbacks = runtime.context.fallbacks
    if any(o.status == "failed" and o.variant in fallbacks for o in outcomes):
        return Command(goto="fallback", update={"outcomes": outcomes})
    return _finish(state, outcomes, runtime.context)


async def _safe_judge(
    judge: Judge, item: Item, image: ImageInput | None, described: Described
) -> JudgeOutcome:
    try:
        return await judge.judge(item, image, described)
    except CacheError:  # the cache cannot be written or read: the whole run stops, not one item
        raise
    except Exception as exc:  # a judge bug for one item must not cancel its siblings
        log.exception("judge %s crashed on item %s", judge.name, item.item_id)
        return JudgeOutcome.failed(judge.name, f"internal error: {type(exc).__name__}: {exc}")


async def fallback(state: ItemState, runtime: Runtime[RunContext]) -> Command[str]:
    outcomes = apply_fallbacks(state["outcomes"], runtime.context.fallbacks)
    return _finish(state, outcomes, runtime.context)


def _finish(state: ItemState, outcomes: list[JudgeOutcome], ctx: RunContext) -> Command[str]:
    """The item is done: report it, drop its image, and route to describe with the worker's
    next item, or to END when the feed is empty."""
    result = ItemResult(
        item=state["item"],
        described=state["described"],
        outcomes=outcomes,
        image_error=state.get("image_error"),
    )
    ctx.progress.item_done(result)
    feed = state.get("feed")
    following = next(feed, None) if feed is not None else None
    update: dict[str, Any] = {"outcomes": outcomes, "results": [result], "image": None}
    if following is None:
        return Command(goto=END, update=update)
    return Command(goto="describe", update={**update, "item": following})


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
    """Compile the item graph (describe -> judge -> fallback when needed -> next item or END)."""
    graph = StateGraph(ItemState, context_schema=RunContext)
    graph.add_node("describe", describe)
    graph.add_node("judge", judge, destinations=("fallback", "describe", END))
    graph.add_node("fallback", fallback, destinations=("describe", END))
    graph.add_edge(START, "describe")
    graph.add_edge("describe", "judge")
    return graph.compile()
