"""What a run does once every item is done: the pairwise judges, then the evaluator.

The run graph's `pairwise` and `evaluator` nodes (`agents.graph`) are these two steps; a
re-run whose items were all answered from the cache (`agents.cached`) runs them directly,
without loading LangGraph.
"""

from __future__ import annotations

import asyncio

from titjudge.agents.item import RunContext
from titjudge.judges.jury import decide_jury
from titjudge.judges.pairwise import pairs_to_judge, run_pairwise
from titjudge.metrics.evaluate import evaluate_run
from titjudge.records import ItemResult, RunEvaluation
from titjudge.records.pairs import PairwiseRun


async def judge_pairs(results: list[ItemResult], ctx: RunContext) -> dict[str, PairwiseRun]:
    """Every pairwise judge over the run's pairs, read from the items' descriptions; then
    every jury, from its members' answers (`judges.jury`: no model call)."""
    found = await _pairwise_judges(results, ctx)
    for jury in ctx.juries:
        found[jury.name] = decide_jury(jury, results, found, ctx.pairs or [], ctx.seed)
    return found


async def _pairwise_judges(results: list[ItemResult], ctx: RunContext) -> dict[str, PairwiseRun]:
    if not ctx.pairwise:
        return {}
    items = [r.item for r in results]
    descriptions = {r.item.item_id: r.described for r in results}
    ctx.progress.pairs_begin(len(pairs_to_judge(items, ctx.pairs)) * len(ctx.pairwise))
    runs = await asyncio.gather(
        *(
            run_pairwise(
                j, items, descriptions, ctx.pairs, ctx.progress.pairs_judged, probe=ctx.probe
            )
            for j in ctx.pairwise
        )
    )
    return {run.judge: run for run in runs}


async def run_evaluator(
    results: list[ItemResult], pairwise: dict[str, PairwiseRun], ctx: RunContext
) -> RunEvaluation:
    """Everything the run writes (in a thread: the bootstrap is CPU work)."""
    return await asyncio.to_thread(
        evaluate_run,
        results,
        pairwise,
        ctx.human,
        ctx.variant_order,
        bootstrap=ctx.bootstrap,
        seed=ctx.seed,
    )


__all__ = ["judge_pairs", "run_evaluator"]
