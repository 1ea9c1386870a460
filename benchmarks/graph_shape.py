"""Measure LangGraph fan-out shapes with no-op async nodes: one Send per item vs chunks.

Run: python benchmarks/graph_shape.py  -- prints wall seconds per shape and size.
"""

from __future__ import annotations

import asyncio
import operator
import time
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class State(TypedDict, total=False):
    items: list[int]
    chunk: list[int]
    done: Annotated[list[int], operator.add]


def build(chunk_size: int) -> Any:
    async def work(state: State) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"done": list(state["chunk"])}

    def fan(state: State) -> list[Send]:
        items = state["items"]
        return [
            Send("work", {"chunk": items[i : i + chunk_size]})
            for i in range(0, len(items), chunk_size)
        ]

    graph = StateGraph(State)
    graph.add_node("work", work)
    graph.add_conditional_edges(START, fan, ["work"])
    graph.add_edge("work", END)
    return graph.compile()


async def measure(n: int, chunk_size: int) -> float:
    app = build(chunk_size)
    started = time.perf_counter()
    out = await app.ainvoke({"items": list(range(n)), "done": []}, {"max_concurrency": 64})
    assert len(out["done"]) == n
    return time.perf_counter() - started


async def main() -> None:
    print("| items | chunk size | tasks | seconds |")
    print("|---|---|---|---|")
    for n in (2_600, 10_000, 20_000):
        for chunk in (1, 64):
            seconds = await measure(n, chunk)
            print(f"| {n} | {chunk} | {-(-n // chunk)} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
