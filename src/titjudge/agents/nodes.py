"""The item graph: describe -> judge -> (fallback, only when needed) for each item, in a loop.

One run of this graph is one worker: it takes an item, routes it through describe, judge
and (only when a judge with a fallback failed) fallback, and the node that finishes the
item records its result and takes the worker's next item from the shared feed, routing
back to describe, or to END when the feed is empty. Routing from judge and fallback is a
`Command` with declared destinations, so an item costs two LangGraph steps (three with a
fallback) and no state copy for a routing function. A run with no feed scores one item.

Each node is a thin wrapper of its step in `agents.item`, the same functions the cached pass
(`agents.cached`) calls directly, so an item is judged, routed and finished the same way on
both paths. The steps catch every per-item error as a failure record: one bad
image or one failed call never cancels a LangGraph step (which would cancel its siblings).
What the nodes need comes from the run context (`Runtime[RunContext]`), never from the
graph's state, which holds only this item's own data.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from titjudge.agents import item as steps
from titjudge.agents.item import RunContext
from titjudge.models.core.clients import SEND
from titjudge.records import ItemResult
from titjudge.records.image_input import ImageInput
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeOutcome

#: LangGraph steps one item takes at most (describe, judge, fallback): a worker's recursion
#: limit is this times the items it may run
STEPS_PER_ITEM = 3


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
    """`item.describe`: load the image and describe it (a description no judge reads is
    skipped). The item counts as described once this returns, whatever the outcome."""
    ctx = runtime.context
    # a probe that may not read images (the estimate, explain) takes the image as an earlier
    # run remembered it, when one did: its size and hash, not its bytes
    probe = ctx.probe
    peeked = ctx.images.peek(state["item"].image) if probe is not SEND and not probe.fits else None
    update = await steps.describe(state["item"], ctx, peeked)
    ctx.progress.item_described()
    return update


async def judge(state: ItemState, runtime: Runtime[RunContext]) -> Command[str]:
    """`item.judge`: every per-item judge on this item; then on along its route: `fallback`,
    or the item is done."""
    route, outcomes = await steps.judge(
        state["item"], state.get("image"), state["described"], runtime.context
    )
    if route == "fallback":
        return Command(goto="fallback", update={"outcomes": outcomes})
    return _finish(state, outcomes, runtime.context)


async def fallback(state: ItemState, runtime: Runtime[RunContext]) -> Command[str]:
    """`item.fallback`, then the item is done."""
    return _finish(state, steps.fallback(state["outcomes"], runtime.context), runtime.context)


def _finish(state: ItemState, outcomes: list[JudgeOutcome], ctx: RunContext) -> Command[str]:
    """`item.finish`, drop the item's image, and route to describe with the worker's next
    item, or to END when the feed is empty."""
    result = steps.finish(
        state["item"], state["described"], outcomes, state.get("image_error"), ctx
    )
    feed = state.get("feed")
    following = next(feed, None) if feed is not None else None
    update: dict[str, Any] = {"outcomes": outcomes, "results": [result], "image": None}
    if following is None:
        return Command(goto=END, update=update)
    return Command(goto="describe", update={**update, "item": following})


def build_item_graph() -> Any:
    """Compile the item graph (describe -> judge -> fallback when needed -> next item or END)."""
    graph = StateGraph(ItemState, context_schema=RunContext)
    graph.add_node("describe", describe)
    graph.add_node("judge", judge, destinations=("fallback", "describe", END))
    graph.add_node("fallback", fallback, destinations=("describe", END))
    graph.add_edge(START, "describe")
    graph.add_edge("describe", "judge")
    return graph.compile()
