"""Benchmark 1b: the API pipeline against a server that enforces a requests-per-minute
limit with 429 + Retry-After: the rate achieved against the limit, and no lost items.

The server (its own process, 200 ms latency) admits `limit x window / 60` requests per
sliding `window` seconds. A short window keeps the run many windows long, so the limit
binds all the way through. Two clients at concurrency 64: one told the limit (`rpm`, so
titjudge paces itself), one relying on 429s and Retry-After alone.

  python benchmarks/rate_limit.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_throughput import measure_run  # noqa: E402
from harness import Section, Table, fmt, fresh_dir, standalone, synthetic, timed_section  # noqa: E402

TITLE = "1b. API pipeline under a requests-per-minute limit"
LIMIT_PER_MINUTE = 1800
WINDOW = 5.0


def most_in_window(times: list[float], window: float) -> int:
    """The most of the (sorted) timestamps inside any half-open interval of `window` seconds."""
    peak, start = 0, 0
    for end, moment in enumerate(times):
        while moment - times[start] >= window:
            start += 1
        peak = max(peak, end - start + 1)
    return peak


def achieved_per_minute(records: list[dict[str, Any]], window: float) -> float:
    """Admitted requests per minute, as a sliding-window limit counts them.

    Over a span T a limit of L per window W admits at most L x (T + W) / W (a full window
    at the start, then L per W), so admitted / (T + W) never exceeds the limit's rate and
    equals it when the client used all of it.
    """
    times = sorted(r["arrived"] for r in records if r["status"] == 200)
    if len(times) < 2:
        return float("nan")
    return len(times) / (times[-1] - times[0] + window) * 60.0


def run(quick: bool, work: Path) -> Section:
    items = 80 if quick else 400
    per_window = round(LIMIT_PER_MINUTE * WINDOW / 60.0)
    method = (
        f"The pipeline of benchmark 1 (describe + TIT-Score-LLM judge, 200 ms latency, concurrency 64) on the first "
        f"{items} items, against a server that admits {per_window} requests per sliding {WINDOW:g} s "
        f"(= {LIMIT_PER_MINUTE}/min) and answers 429 with Retry-After beyond. Baseline: the limit itself; ideal wall "
        "= calls / limit."
    )

    def body(section: Section) -> None:
        data = synthetic(work, 20 if quick else 200, 13)
        bench = fresh_dir(work / "rate-limit")
        server_extra = ("--rpm", str(per_window), "--rpm-window", f"{WINDOW:g}")
        table = Table(
            [
                "client",
                "items",
                "model calls",
                "429s",
                "achieved / min",
                "limit / min",
                f"most admitted in any {WINDOW:g} s (limit {per_window})",
                f"most requests sent in any 1 s (even pace: {LIMIT_PER_MINUTE / 60:.0f})",
                "wall s",
                "ideal s",
                "failed items",
            ]
        )
        for label, rpm in (
            (f"told the limit (`rpm: {LIMIT_PER_MINUTE}`)", LIMIT_PER_MINUTE),
            ("not told the limit (429 + Retry-After only)", None),
        ):
            m = measure_run(
                bench,
                data,
                64,
                cache=fresh_dir(bench / "cache"),
                limit=items,
                rpm=rpm,
                server_extra=server_extra,
            )
            rate = achieved_per_minute(m.records, WINDOW)
            burst = most_in_window(sorted(r["arrived"] for r in m.records), 1.0)
            peak = most_in_window(
                sorted(r["arrived"] for r in m.records if r["status"] == 200), WINDOW
            )
            ideal = m.ok_requests / (LIMIT_PER_MINUTE / 60.0)
            section.headline(
                f"rate limit {LIMIT_PER_MINUTE}/min, client {'told' if rpm else 'not told'} the limit",
                f"{rate:,.0f}/min, {m.report['failed_items']} items lost, {m.by_status.get('429', 0)} 429s",
                f"limit {LIMIT_PER_MINUTE}/min",
            )
            table.add(
                label,
                m.report["n_items"],
                m.ok_requests,
                m.by_status.get("429", 0),
                fmt(rate, 0),
                LIMIT_PER_MINUTE,
                peak,
                burst,
                fmt(m.report["wall"], 1),
                fmt(ideal, 1),
                m.report["failed_items"],
            )
        section.tables.append(table)
        section.notes += [
            "achieved / min = admitted / (span from first to last admission + one window) x 60: over a span T a "
            "sliding window of W admits at most limit x (T + W) / W, so this reaches the limit exactly when the "
            "client used all of it, and never exceeds it.",
            "most requests sent in any 1 s counts every arrival (admitted or 429): a client pacing itself evenly "
            "at the limit sends about limit/60 per second; far more means bursts.",
            "failed items = items with any failed variant after retries (lost items); the goal is 0.",
        ]

    return timed_section("rate_limit", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
