"""The LangGraph graph: items -> chunks -> (describe -> judge) per chunk -> pairwise -> evaluate.

Shape chosen by measurement (benchmarks/graph_shape.py): one Send per item grows
superlinearly (10k no-op items: 10 s; 20k: 45 s) while 64-item chunks stay near zero
(20k: 0.08 s). Each chunk runs a small describe -> judge subgraph; its items run
concurrently inside the nodes, bounded by each model's limiter, so many chunks can be
in flight without exceeding any model's concurrency or rate limit.

Pairwise judges need both images of a pair described, so they run in their own node
once every chunk is done, over the run's pairs, `PAIR_CHUNK` pairs at a time; their
per-item win rates join the item results before the evaluator sees them.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from titjudge.agents.nodes import RunContext, attach_pairwise, describe_one, judge_one
from titjudge.data.records import Item
from titjudge.judges.pairwise import PairwiseRun, pairs_to_judge, run_pairwise
from titjudge.records import ItemResult

CHUNK_SIZE = 64


class RunState(TypedDict, total=False):
    items: list[Item]
    results: Annotated[list[ItemResult], operator.add]
    pairwise: dict[str, PairwiseRun]
    evaluation: dict[str, Any]


class ChunkState(TypedDict, total=False):
    chunk: list[Item]
    described: list[Any]
    results: list[ItemResult]


Evaluate = Callable[[list[ItemResult], dict[str, PairwiseRun]], dict[str, Any]]


def build_graph(ctx: RunContext, evaluate: Evaluate, chunk_size: int = CHUNK_SIZE) -> Any:
    """Compile the run graph. `evaluate` turns all item results (pairwise win rates attached)
    and the pairwise runs into metrics (may be trivial)."""

    async def describer(state: ChunkState) -> dict[str, Any]:
        described = await asyncio.gather(*(describe_one(ctx, item) for item in state["chunk"]))
        return {"described": list(described)}

    async def judge(state: ChunkState) -> dict[str, Any]:
        async def one(item: Item, found: Any) -> ItemResult:
            image, described, image_error = found
            outcomes = await judge_one(ctx, item, image, described)
            result = ItemResult(
                item=item, described=described, outcomes=outcomes, image_error=image_error
            )
            ctx.progress.item_done(result)
            return result

        results = await asyncio.gather(
            *(one(i, d) for i, d in zip(state["chunk"], state["described"], strict=True))
        )
        return {"results": list(results), "described": []}  # drop image bytes once judged

    chunk_graph = StateGraph(ChunkState)
    chunk_graph.add_node("describer", describer)
    chunk_graph.add_node("judge", judge)
    chunk_graph.add_edge(START, "describer")
    chunk_graph.add_edge("describer", "judge")
    chunk_graph.add_edge("judge", END)
    chunk_app = chunk_graph.compile()

    async def run_chunk(state: ChunkState) -> dict[str, Any]:
        out = await chunk_app.ainvoke({"chunk": state["chunk"]})
        return {"results": out["results"]}

    def fan_out(state: RunState) -> list[Send] | str:
        items = state["items"]
        if not items:
            return "pairwise"
        return [
            Send("chunk", {"chunk": items[i : i + chunk_size]})
            for i in range(0, len(items), chunk_size)
        ]

    async def pairwise(state: RunState) -> dict[str, Any]:
        if not ctx.pairwise:
            return {"pairwise": {}}
        results = sorted(state.get("results", []), key=lambda r: r.item.item_id)
        items = [r.item for r in results]
        descriptions = {r.item.item_id: r.described for r in results}
        ctx.progress.pairs_total = len(pairs_to_judge(items, ctx.pairs)) * len(ctx.pairwise)
        runs = await asyncio.gather(
            *(
                run_pairwise(j, items, descriptions, ctx.pairs, ctx.progress.pairs_judged)
                for j in ctx.pairwise
            )
        )
        return {"pairwise": {run.judge: run for run in runs}}

    async def evaluator(state: RunState) -> dict[str, Any]:
        runs = state.get("pairwise") or {}
        ordered = sorted(state.get("results", []), key=lambda r: r.item.item_id)
        ordered = attach_pairwise(ordered, runs, ctx.variant_order)
        return {"evaluation": await asyncio.to_thread(evaluate, ordered, runs)}

    graph = StateGraph(RunState)
    graph.add_node("chunk", run_chunk)
    graph.add_node("pairwise", pairwise)
    graph.add_node("evaluator", evaluator)
    graph.add_conditional_edges(START, fan_out, ["chunk", "pairwise"])
    graph.add_edge("chunk", "pairwise")
    graph.add_edge("pairwise", "evaluator")
    graph.add_edge("evaluator", END)
    return graph.compile()


def run_config(concurrency: int, chunk_size: int = CHUNK_SIZE) -> dict[str, Any]:
    """LangGraph run config: `max_concurrency` must sit at the top level (not in configurable)."""
    chunks_in_flight = max(2, -(-2 * concurrency // chunk_size))
    return {"max_concurrency": chunks_in_flight, "recursion_limit": 50}
