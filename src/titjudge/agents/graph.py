"""The run graph: items -> cached pass -> (item workers, each one run of the item graph in
nodes.py) -> pairwise -> evaluator.

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

The graph is the driver of items in every mode a run's calls have (`RunContext.probe`):
answering (`SEND`), and the probing passes, which run the same nodes with the probe in
the run context and end after the pairwise judges, evaluating nothing: the batch phase's
rounds (`agents.batch_phase`: misses queued for batch jobs), the estimate and explain
(`run.estimate`: misses counted, nothing sent). A probing pass runs one worker, so its
calls are met in the items' order, as the requests a run would send first are.

When a run answers (`SEND`), the graph's first node is the cached pass (`agents.cached`):
the items whose every call the cache answers become results there, in one step for all of
them, and only the rest go to the workers. A fully cached re-run is then three steps of the
graph (cached, pairwise, evaluator), not two per item (RESULTS.md section 9).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from titjudge.agents.cached import resolve_cached
from titjudge.agents.finish import judge_pairs, run_evaluator
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


@functools.cache
def build_graph() -> Any:
    """Compile the run graph (once: a compiled graph serves any number of runs); its nodes
    read the run's `RunContext` from `context=`."""
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

    async def cached(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """A run's items answered from the cache alone become results; the rest go on. A
        probing pass has a probe of its own: every item goes on."""
        if not runtime.context.sends:
            return {}
        answered, rest = await resolve_cached(state["items"], runtime.context)
        return {"results": answered, "items": rest}

    async def fan_out(state: RunState, config: RunnableConfig) -> list[Send] | str:
        items = state["items"]
        if not items:
            return "pairwise"
        feed = iter(items)
        workers = min(len(items), config.get("max_concurrency") or len(items))
        steps = STEPS_PER_ITEM * len(items) + 1
        return [Send("items", {"feed": feed, "steps": steps}) for _ in range(workers)]

    async def pairwise(state: RunState, runtime: Runtime[RunContext]) -> Command[str]:
        """The pairwise judges; then the evaluator, or the end of a probing pass."""
        runs = await judge_pairs(state.get("results", []), runtime.context)
        following = "evaluator" if runtime.context.sends else END
        return Command(goto=following, update={"pairwise": runs})

    async def evaluator(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        results, runs = state.get("results", []), state.get("pairwise") or {}
        return {"evaluation": await run_evaluator(results, runs, runtime.context)}

    graph = StateGraph(RunState, context_schema=RunContext)
    graph.add_node("cached", cached)
    graph.add_node("items", worker)
    graph.add_node("pairwise", pairwise, destinations=("evaluator", END))
    graph.add_node("evaluator", evaluator)
    graph.add_edge(START, "cached")
    graph.add_conditional_edges("cached", fan_out, ["items", "pairwise"])
    graph.add_edge("items", "pairwise")
    graph.add_edge("evaluator", END)
    return graph.compile()


def run_config(concurrency: int) -> dict[str, Any]:
    """LangGraph run config: `max_concurrency` (the workers, so the items in flight) must sit
    at the top level, not in `configurable`."""
    return {"max_concurrency": items_in_flight(concurrency), "recursion_limit": 50}


async def drive(items: list[Item], ctx: RunContext, concurrency: int = 1) -> RunState:
    """Run `items` through the graph in `ctx`'s mode: its final state (`results`: those the
    cache answered, then the rest in completion order; `pairwise`; and, when the context sends,
    `evaluation`). A probing pass runs one worker, whatever `concurrency`."""
    config = run_config(concurrency) if ctx.sends else {"max_concurrency": 1}
    state: RunState = await build_graph().ainvoke(
        {"items": items, "results": []}, config, context=ctx
    )
    return state
