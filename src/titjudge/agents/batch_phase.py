"""The batch phase: before the graph, the cache misses of `batch: true` models are answered
by the providers' batch jobs (`models.calls.batch.collect`), so that the graph then runs from the cache.

Round by round, the run's own graph (`agents.graph.drive`: describe, judge, fallback; then the
pairwise judges) runs over every item with a `BatchProbe` (the context's `probe`): what is
cached answers, every miss of a batch model is queued, nothing is sent online. The queued calls go into jobs; their answers are cached (and
their failures kept for the run), so the next round reaches further: round 1 describes, round
2 judges the descriptions. The rounds end when a round queues nothing. Calls of models without
`batch: true` are left to the graph, which sends them online as usual.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from titjudge.agents.graph import drive
from titjudge.agents.item import RunContext
from titjudge.models.calls.batch.collect import BatchProbe, collect
from titjudge.models.calls.batch.progress import BatchProgress
from titjudge.records.items import Item

#: describe, judge, and one spare (a judge that reads another judge's answers)
MAX_PHASE_ROUNDS = 4


async def run_batches(
    items: list[Item], ctx: RunContext, *, show: bool = False, stream: IO[str] | None = None
) -> dict[str, Any]:
    """Answer the run's batch-model misses by batch jobs; per model, what the jobs did."""
    out = stream if stream is not None else sys.stderr
    terminal = bool(getattr(out, "isatty", lambda: False)())

    def report(line: str) -> None:
        out.write(f"\r\033[K{line}" if terminal else f"{line}\n")
        out.flush()

    progress = BatchProgress(report=report if show else None)
    for _ in range(MAX_PHASE_ROUNDS):
        probe = BatchProbe()
        await drive(items, ctx.probing(probe=probe))
        if not probe.queued:
            break
        await collect(list(probe.queued.values()), progress)
    if show and terminal and progress.stats:
        out.write("\n")
    return {model: stats.to_json() for model, stats in progress.stats.items()}


__all__ = ["MAX_PHASE_ROUNDS", "run_batches"]
