"""The run graph: items -> (item workers, each one run of the item graph in nodes.py) ->
pairwise -> evaluator.

Fan-out shape, chosen by measurement (benchmarks/graph_overhead.py, RESULTS.md section 7):
`items_in_flight` workers are started with one `Send` each; every worker is ONE run of the
looping item graph: it takes the next item from the run's shared feed, routes it through
describe -> judge (-> fallback) and takes the next item in the node that finishes the
current one, until the feed is empty. So no item waits for another (an item goes to its
judges the moment its own description returns, and a slow item holds up only its own
worker), at most `items_in_flight` images are in memory at once, and the graph's cost per
item is two LangGraph steps, with no run set-up per item. One `Send` per item instead grows
quadratically: LangGraph rebuilds the step's list of pending writes each time a task
finishes, and waits on every task of the step each time one completes, so 20,000 one-item
tasks in one step cost tens of seconds before any model is called.

Pairwise judges need both images of a pair described, so they run in their own node
once every item is done. The evaluator node returns everything the run writes
(`RunEvaluation`); the runner writes it and recomputes nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from titjudge.agents.finish import evaluate, judge_pairs
from titjudge.agents.item import RunContext
from titjudge.agents.nodes import STEPS_PER_ITEM, build_item_graph
from titjudge.records import ItemResult, RunEvaluation
from titjudge.records.items import Item
from titjudge.records.pairs import PairwiseRun


class RunState(TypedDict, total=False):
    items: list[Item]
    #: one list per worker, in completion order; the evaluator orders them
    results: Annotated[list[ItemResult], operator.add]
    pairwise: dict[str, PairwiseRun]
    evaluation: RunEvaluation


class WorkerState(TypedDict):
    feed: Iterator[Item]
    #: the worker's recursion limit: enough steps to run every item of the run
    steps: int


def items_in_flight(concurrency: int) -> int:
    """Workers (items held at once): twice the model concurrency, so that while some items
    wait on their judges others are being described and no model slot sits idle."""
    return max(2, 2 * concurrency)


def build_graph() -> Any:
    """Compile the run graph; its nodes read the run's `RunContext` from `context=`."""
    item_graph = build_item_graph()

    async def worker(state: WorkerState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        first = next(state["feed"], None)
        if first is None:
            return {"results": []}
        final = await item_graph.ainvoke(
            {"feed": state["feed"], "item": first},
            {"recursion_limit": state["steps"]},
            context=runtime.context,
        )
        return {"results": final["results"]}

    async def fan_out(state: RunState, config: RunnableConfig) -> list[Send] | str:
        items = state["items"]
        if not items:
            return "pairwise"
        feed = iter(items)
        workers = min(len(items), config.get("max_concurrency") or len(items))
        steps = STEPS_PER_ITEM * len(items) + 1
        return [Send("items", {"feed": feed, "steps": steps}) for _ in range(workers)]

    async def pairwise(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        return {"pairwise": await judge_pairs(state.get("results", []), runtime.context)}

    async def evaluator(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        results, runs = state.get("results", []), state.get("pairwise") or {}
        return {"evaluation": await evaluate(results, runs, runtime.context)}

    graph = StateGraph(RunState, context_schema=RunContext)
    graph.add_node("items", worker)
    graph.add_node("pairwise", pairwise)
    graph.add_node("evaluator", evaluator)
    graph.add_conditional_edges(START, fan_out, ["items", "pairwise"])
    graph.add_edge("items", "pairwise")
    graph.add_edge("pairwise", "evaluator")
    graph.add_edge("evaluator", END)
    return graph.compile()


def run_config(concurrency: int) -> dict[str, Any]:
    """LangGraph run config: `max_concurrency` (the workers, so the items in flight) must sit
    at the top level, not in `configurable`."""
    return {"max_concurrency": items_in_flight(concurrency), "recursion_limit": 50}
