"""The LangGraph fan-out shapes of `graph_shape.py` (one Send per item vs 64-item chunks),
as a section of the suite. `graph_shape.py` stays the standalone script; this only calls it.

  python benchmarks/graph_fanout.py [--quick]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graph_shape  # noqa: E402
from harness import Section, Table, fmt, standalone, timed_section  # noqa: E402

TITLE = "7. LangGraph fan-out shape (no-op nodes)"


def run(quick: bool, work: Path) -> Section:
    sizes = (2_600,) if quick else (2_600, 10_000, 20_000)
    method = (
        "`benchmarks/graph_shape.py`: a graph whose node does nothing, fed N items as one `Send` per item "
        "(baseline) or one per 64-item chunk (the shape `agents/graph.py` uses); wall seconds of "
        "`ainvoke` with max_concurrency 64. This is the graph's own cost, with no model behind it."
    )

    def body(section: Section) -> None:
        table = Table(["items", "chunk size", "tasks", "seconds", "per item µs"])
        for n in sizes:
            per_chunk = {}
            for chunk in (1, 64):
                seconds = per_chunk[chunk] = asyncio.run(graph_shape.measure(n, chunk))
                table.add(
                    f"{n:,}",
                    chunk,
                    f"{-(-n // chunk):,}",
                    fmt(seconds, 3),
                    fmt(seconds * 1e6 / n, 1),
                )
        section.headline(
            f"LangGraph fan-out of {sizes[-1]:,} no-op items, 64-item chunks",
            f"{per_chunk[64]:.3f} s",
            f"one Send per item {per_chunk[1]:.2f} s",
        )
        section.tables.append(table)

    return timed_section("graph", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
