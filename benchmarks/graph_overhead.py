"""The run graph's own cost per item, and how close it gets to the ideal on a long-tailed server.

  python benchmarks/graph_overhead.py [--quick]

No-op case: the describer and the judge answer at once, so what is left is the graph.
Shapes, same items, same describe/judge work:
  - titjudge: `agents.graph.build_graph` (item workers, each one run of the looping item
    graph -> pairwise -> evaluator), max_concurrency `run_config(64)`;
  - chunked: the round-1 graph (64-item chunks, each a describe -> judge subgraph whose
    nodes gather the whole chunk), copied below as the baseline;
  - one Send per item into one node that describes then judges, with LangGraph's usual
    `operator.add` list reducer, and with an in-place extend reducer;
  - no graph: the same work for every item through plain asyncio workers (the floor).
graph overhead per item = (shape's wall - no graph's wall) / items.

Long-tail case: every describe and judge call sleeps a lognormal latency (median 200 ms,
sigma 0.9: a 2 s-median server scaled down 10x, so that the client's CPU is not the
bottleneck) under one limiter of 64 slots; ideal = sum of all latencies / 64.
"""

from __future__ import annotations

import asyncio
import operator
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Section, Table, fmt, standalone, timed_section  # noqa: E402

from titjudge.agents.graph import build_graph, run_config  # noqa: E402
from titjudge.agents.item import RunContext  # noqa: E402
from titjudge.data.images import ImageLoader  # noqa: E402
from titjudge.judges.base import Judge  # noqa: E402
from titjudge.judges.options import JudgeOptions  # noqa: E402
from titjudge.models.core.base import GenerateRequest  # noqa: E402
from titjudge.models.core.clients import SEND, CallMode  # noqa: E402
from titjudge.prompts.loader import load_template  # noqa: E402
from titjudge.records import ItemResult  # noqa: E402
from titjudge.records.calls import CallResult  # noqa: E402
from titjudge.records.items import Item  # noqa: E402
from titjudge.records.outcomes import Described, JudgeInput, JudgeOutcome  # noqa: E402

TITLE = "7. LangGraph run graph: overhead per item and long-tail latency"
CONCURRENCY = 64
CHUNK_SIZE = 64


class Server:
    """One limiter of `slots` model calls; each call sleeps the next latency of its kind."""

    def __init__(self, n: int, slots: int, median: float | None, sigma: float = 0.9):
        rng = random.Random(7)
        draw = (lambda: rng.lognormvariate(0.0, sigma) * median) if median else (lambda: 0.0)
        self.latencies = {kind: [draw() for _ in range(n)] for kind in ("describe", "judge")}
        self._next = {kind: iter(values) for kind, values in self.latencies.items()}
        self.slots = asyncio.Semaphore(slots)
        self.ideal = sum(map(sum, self.latencies.values())) / slots

    async def call(self, kind: str) -> None:
        latency = next(self._next[kind])
        if latency:
            async with self.slots:
                await asyncio.sleep(latency)
        else:
            await asyncio.sleep(0)


class Describer:
    def __init__(self, server: Server):
        self.server = server

    async def text(self, request: GenerateRequest, **_: Any) -> CallResult[str]:
        await self.server.call("describe")
        return CallResult(ok=True, value="a red cube on a table")


class Scorer(Judge):
    def __init__(self, server: Server):
        super().__init__(JudgeOptions(name="judge", kind="test"))
        self.server = server

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        await self.server.call("judge")
        return JudgeOutcome(self.name, "ok", score=1.0)


def context(server: Server) -> RunContext:
    return RunContext(
        describer=Describer(server),  # type: ignore[arg-type]
        describe_template=load_template("describe_paper"),
        describe_max_tokens=64,
        describe_temperature=0.0,
        judges=[Scorer(server)],
        variant_order=["judge"],
        # as a run's: at most run.concurrency images decoded at once, shared by every shape
        images=ImageLoader(CONCURRENCY),
        probe=SEND,
    )


async def one_item(ctx: RunContext, item: Item) -> ItemResult:
    """The per-item work without a graph: what every shape does for an item."""
    image = await ctx.images.load(item.image)
    system, user = ctx.describe_template.render()
    request = GenerateRequest(prompt=user, system=system, images=(image,), max_tokens=64)
    call = await ctx.describer.text(request, role="describer", probe=SEND)
    described = Described(text=call.value, call=call)
    given = JudgeInput(item, image, described)
    outcomes = [await j.judge(given, probe=SEND) for j in ctx.judges]
    return ItemResult(item=item, described=described, outcomes=outcomes)


# ------------------------------------------------------------------------------ shapes


async def no_graph(ctx: RunContext, items: list[Item]) -> int:
    feed = iter(items)

    async def worker() -> list[ItemResult]:
        return [await one_item(ctx, item) for item in feed]

    done = await asyncio.gather(*(worker() for _ in range(2 * CONCURRENCY)))
    return len(sorted((r for d in done for r in d), key=lambda r: r.item.item_id))


async def titjudge_graph(ctx: RunContext, items: list[Item]) -> int:
    state = await build_graph().ainvoke(
        {"items": items, "results": []}, run_config(CONCURRENCY), context=ctx
    )
    return len(state["evaluation"].results)


def extend_in_place(current: list[Any], new: list[Any]) -> list[Any]:
    current.extend(new)
    return current


class SendState(TypedDict, total=False):
    items: list[Item]
    item: Item
    results: Annotated[list[ItemResult], operator.add]


class SendStateInPlace(TypedDict, total=False):
    items: list[Item]
    item: Item
    results: Annotated[list[ItemResult], extend_in_place]


def send_per_item(state_type: Any) -> Callable[..., Any]:
    async def run(ctx: RunContext, items: list[Item]) -> int:
        async def node(state: dict[str, Any]) -> dict[str, Any]:
            return {"results": [await one_item(ctx, state["item"])]}

        async def fan(state: dict[str, Any]) -> list[Send]:
            return [Send("item", {"item": item}) for item in state["items"]]

        graph = StateGraph(state_type)
        graph.add_node("item", node)
        graph.add_conditional_edges(START, fan, ["item"])
        graph.add_edge("item", END)
        out = await graph.compile().ainvoke(
            {"items": items, "results": []}, {"max_concurrency": 2 * CONCURRENCY}
        )
        return len(sorted(out["results"], key=lambda r: r.item.item_id))

    return run


class ChunkRunState(TypedDict, total=False):
    items: list[Item]
    results: Annotated[list[ItemResult], operator.add]


class ChunkState(TypedDict, total=False):
    chunk: list[Item]
    described: list[Any]
    results: list[ItemResult]


async def chunked_graph(ctx: RunContext, items: list[Item]) -> int:
    """The round-1 graph: Send per 64-item chunk; each chunk describes all its items, then
    judges them (a barrier per chunk), via a chunk subgraph invoked from the chunk node."""

    async def describer(state: ChunkState) -> dict[str, Any]:
        async def one(item: Item) -> Any:
            image = await ctx.images.load(item.image)
            system, user = ctx.describe_template.render()
            request = GenerateRequest(prompt=user, system=system, images=(image,), max_tokens=64)
            call = await ctx.describer.text(request, role="describer", probe=SEND)
            return image, Described(text=call.value, call=call)

        return {"described": list(await asyncio.gather(*map(one, state["chunk"])))}

    async def judge(state: ChunkState) -> dict[str, Any]:
        async def one(item: Item, found: Any) -> ItemResult:
            image, described = found
            outcomes = list(
                await asyncio.gather(
                    *(j.judge(JudgeInput(item, image, described), probe=SEND) for j in ctx.judges)
                )
            )
            return ItemResult(item=item, described=described, outcomes=outcomes)

        pairs = zip(state["chunk"], state["described"], strict=True)
        return {"results": list(await asyncio.gather(*(one(i, d) for i, d in pairs)))}

    chunk_graph = StateGraph(ChunkState)
    chunk_graph.add_node("describer", describer)
    chunk_graph.add_node("judge", judge)
    chunk_graph.add_edge(START, "describer")
    chunk_graph.add_edge("describer", "judge")
    chunk_graph.add_edge("judge", END)
    chunk_app = chunk_graph.compile()

    async def run_chunk(state: ChunkState) -> dict[str, Any]:
        return {"results": (await chunk_app.ainvoke({"chunk": state["chunk"]}))["results"]}

    def fan_out(state: ChunkRunState) -> list[Send]:
        found = state["items"]
        return [
            Send("chunk", {"chunk": found[i : i + CHUNK_SIZE]})
            for i in range(0, len(found), CHUNK_SIZE)
        ]

    graph = StateGraph(ChunkRunState)
    graph.add_node("chunk", run_chunk)
    graph.add_conditional_edges(START, fan_out, ["chunk"])
    graph.add_edge("chunk", END)
    in_flight = max(2, -(-2 * CONCURRENCY // CHUNK_SIZE))
    out = await graph.compile().ainvoke(
        {"items": items, "results": []}, {"max_concurrency": in_flight, "recursion_limit": 50}
    )
    return len(sorted(out["results"], key=lambda r: r.item.item_id))


SHAPES: dict[str, Callable[..., Any]] = {
    "no graph (floor)": no_graph,
    "titjudge graph (item workers)": titjudge_graph,
    "chunked, round 1 (baseline)": chunked_graph,
    "one Send per item, operator.add": send_per_item(SendState),
    "one Send per item, in-place extend": send_per_item(SendStateInPlace),
}


def make_items(work: Path, n: int) -> list[Item]:
    image = work / "tiny.png"
    Image.new("RGB", (8, 8), (200, 30, 30)).save(image)
    return [Item(f"i{k:06d}", f"p{k // 13}", "a red cube", image, "m") for k in range(n)]


def measure(shape: str, items: list[Item], median: float | None) -> tuple[float, float]:
    """(wall seconds, ideal seconds) of one shape on a fresh loop and server."""

    async def go() -> tuple[float, float]:
        server = Server(len(items), CONCURRENCY, median)
        started = time.perf_counter()
        assert await SHAPES[shape](context(server), items) == len(items)
        return time.perf_counter() - started, server.ideal

    return asyncio.run(go())


def run(quick: bool, work: Path) -> Section:
    sizes = (2_000,) if quick else (2_000, 10_000, 20_000)
    tail_items = 300 if quick else 1_000
    method = (
        "`benchmarks/graph_overhead.py`, no model behind the graph: every describe and judge call "
        "answers at once (no-op), or after a lognormal latency (median 200 ms, sigma 0.9, one "
        "limiter of 64 slots; ideal = sum of latencies / 64). Shapes: titjudge's run graph "
        "(`agents/graph.py`: 128 item workers, each ONE run of the looping item graph describe -> "
        "judge (-> fallback) -> next item's describe); the round-1 graph (64-item chunks, describe-all-then-judge-all per chunk, 2 chunks "
        "in flight), kept in the benchmark as the baseline; one `Send` per item; and the same "
        "per-item work in plain asyncio workers, the floor. graph overhead / item = (wall - floor "
        "wall) / items."
    )

    def body(section: Section) -> None:
        table = Table(["items", "shape", "wall s", "per item ms", "graph overhead / item ms"])
        for n in sizes:
            items = make_items(work, n)
            floor = measure("no graph (floor)", items, None)[0]
            for shape in SHAPES:
                if shape.endswith("in-place extend") and n != 10_000 and not quick:
                    continue
                wall = floor if shape.startswith("no graph") else measure(shape, items, None)[0]
                over = "-" if shape.startswith("no graph") else fmt((wall - floor) * 1e3 / n, 3)
                table.add(f"{n:,}", shape, fmt(wall, 2), fmt(wall * 1e3 / n, 3), over)
                if n == sizes[-1] and shape.startswith("titjudge"):
                    mine = (wall - floor) * 1e3 / n
                if n == sizes[-1] and shape.startswith("chunked"):
                    base = (wall - floor) * 1e3 / n
        section.headline(
            f"run graph overhead per item, {sizes[-1]:,} no-op items",
            f"{mine:.3f} ms",
            f"round-1 chunked graph {base:.3f} ms",
        )
        section.tables.append(table)
        tail = Table(["items", "shape", "wall s", "ideal s", "wall / ideal"])
        items = make_items(work, tail_items)
        ratios = {}
        for shape in ("titjudge graph (item workers)", "chunked, round 1 (baseline)"):
            wall, ideal = measure(shape, items, 0.2)
            ratios[shape] = wall / ideal
            tail.add(f"{tail_items:,}", shape, fmt(wall, 2), fmt(ideal, 2), fmt(wall / ideal, 2))
        tail.caption = "long-tailed latency (lognormal, median 200 ms, sigma 0.9), 64 slots"
        section.tables.append(tail)
        section.headline(
            f"long-tailed server, {tail_items:,} items, wall / ideal",
            f"x{ratios['titjudge graph (item workers)']:.2f}",
            f"round-1 chunked graph x{ratios['chunked, round 1 (baseline)']:.2f}",
        )
        section.notes.append(WHY_SEND_PER_ITEM)
        section.notes.append(WHAT_WAS_TRIED)
        section.notes.append(
            f"target: graph overhead at most 1 ms per item at {sizes[-1]:,} items; titjudge's graph "
            f"{'meets' if mine <= 1.0 else 'does NOT meet'} it ({mine:.3f} ms). Its cost is two "
            "LangGraph steps per item (3 with a fallback; LangGraph 1.2 spends about 0.5 ms per "
            "step on task set-up, callbacks, write application and checkpoint bookkeeping) and no "
            "run set-up per item; the chunked baseline is cheaper per item but "
            "holds every item of a chunk until the chunk's slowest describe returns."
        )

    return timed_section("graph", TITLE, method, body)


WHY_SEND_PER_ITEM = (
    "why one `Send` per item grows quadratically (LangGraph 1.2, profiled at 4,000 items): "
    "each finished task's writes go through `PregelLoop.put_writes`, which rebuilds the "
    "step's whole `checkpoint_pending_writes` list to drop that task's earlier writes "
    "(about half the time, O(tasks) per task), and the runner's `atick` calls "
    "`asyncio.wait(FIRST_COMPLETED)` on every future of the step after each completion "
    "(O(tasks) per completion). The list reducer is a minor part: with an in-place extend "
    "reducer the 10,000-item run is still quadratic, only somewhat faster. A step with a "
    "bounded number of tasks (128 workers here) avoids both."
)

WHAT_WAS_TRIED = (
    "what was measured to cut the per-item cost (LangGraph 1.2.22, 20,000 items, 128 workers; "
    "a toy item graph with no-op nodes unless said): one run per item 2.2 ms/item; one looping "
    "run per worker, routed back to describe by a conditional edge, 1.37 ms; the same routed by a "
    "`Command` from the node that finishes the item (kept: no routing function, so no state copy "
    "to feed it) 0.88-1.09 ms, 0.95 ms with a single worker; results handed out through "
    "`stream_mode='custom'` instead of a results channel 1.40-1.46 ms (not kept); garbage "
    "collector off 1.11 ms (no gain). In titjudge's graph (overhead over the floor): 1.50 ms; "
    "`output_keys='results'` 1.47 ms and running each worker's item graph outside the outer "
    "run's context 1.43 ms, both within noise (not kept). The floor is LangGraph's cost per step, "
    "about 0.45-0.5 ms, times two steps per item (judge needs describe's output, so they cannot "
    "share a step without a barrier between items); the profile's top entries per step are "
    "`Runtime` copies (`dataclasses.replace`), `apply_writes`, `prepare_single_task`, the "
    "callback manager's `get_child`/`on_chain_start` per task, `arun_with_retry` and a "
    "checkpoint built every step even with no checkpointer, none of which a public option turns "
    "off."
    ' Also measured (toy, same machine): judge(k) and describe(k+1) pipelined in one superstep (2 tasks per step, half the steps) 0.93-1.20 ms against 0.92-0.99 ms sequential, so the cost is per task, not per step; `checkpointer=False` and `durability="exit"` within noise; LangGraph 1.0.10 and 1.1.10 make ~5% fewer Python calls per item than 1.2.22 (1,545 vs 1,616 under cProfile), no cure. Meeting 1 ms would need one LangGraph task per item (no separate describe and judge nodes) or patching LangGraph.'
)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
