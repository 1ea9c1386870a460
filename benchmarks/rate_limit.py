"""Benchmark 1b: the API pipeline against a server that enforces a requests-per-window or a
tokens-per-window limit with 429 + Retry-After: the rate achieved against the limit in steady
state, the share of requests refused, and no lost items.

The server (its own process, 200 ms latency) admits `limit x window / 60` requests (or
tokens) per sliding `window` seconds. A short window keeps the run at least ten windows long,
so the limit binds all the way through and a steady state can be told from the start. Four
clients at concurrency 64: told the limit (`rpm` / `tpm`, so titjudge paces itself), and not
told (429s, Retry-After and the concurrency learnt from them).

  python benchmarks/rate_limit.py [--quick]
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_throughput import Measured, measure_run  # noqa: E402
from harness import Section, Table, fmt, fresh_dir, standalone, synthetic, timed_section  # noqa: E402

TITLE = "1b. API pipeline under a requests- or tokens-per-minute limit"
WINDOW = 5.0
RPM = 1800
#: tokens per minute: the pipeline's calls average ~700 tokens, so ~20 calls/s
TPM = 840_000


@dataclass
class Case:
    label: str
    kind: str  # "rpm" or "tpm"
    told: bool
    limit: float  # per minute

    @property
    def per_window(self) -> int:
        return round(self.limit * WINDOW / 60.0)

    def server_args(self) -> tuple[str, ...]:
        return (f"--{self.kind}", str(self.per_window), f"--{self.kind}-window", f"{WINDOW:g}")


CASES = (
    Case(f"rpm {RPM:,}, told (`rpm: {RPM}`)", "rpm", True, RPM),
    Case(f"rpm {RPM:,}, not told (adaptive)", "rpm", False, RPM),
    Case(f"tpm {TPM:,}, told (`tpm: {TPM}`)", "tpm", True, TPM),
    Case(f"tpm {TPM:,}, not told (adaptive)", "tpm", False, TPM),
)


def most_in_window(times: list[float], window: float, weights: list[float] | None = None) -> float:
    """The largest sum of weights (default 1 each) of the sorted timestamps inside any
    half-open interval of `window` seconds."""
    weights = weights or [1.0] * len(times)
    peak, total, start = 0.0, 0.0, 0
    for end, moment in enumerate(times):
        total += weights[end]
        while moment - times[start] >= window:
            total -= weights[start]
            start += 1
        peak = max(peak, total)
    return peak


def admitted(records: list[dict[str, Any]], kind: str) -> tuple[list[float], list[float]]:
    """Arrival times of the admitted requests and what each counted against the limit."""
    ok = sorted((r for r in records if r["status"] == 200), key=lambda r: r["arrived"])
    units = [float(r["tokens"] or 0) if kind == "tpm" else 1.0 for r in ok]
    return [r["arrived"] for r in ok], units


def steady_per_minute(times: list[float], units: list[float], window: float) -> float:
    """Units admitted per minute between one window after the first admission and one window
    before the last: the start-up ramp and the tail are left out."""
    if len(times) < 2 or times[-1] - times[0] <= 3 * window:
        return float("nan")
    lo, hi = times[0] + window, times[-1] - window
    inside = sum(u for t, u in zip(times, units, strict=True) if lo <= t < hi)
    return inside / (hi - lo) * 60.0


def whole_per_minute(times: list[float], units: list[float], window: float) -> float:
    """Admitted / (span + one window) x 60: a sliding window admits at most limit x (T + W) / W
    over a span T, so this never exceeds the limit (it is the measure of the earlier runs)."""
    if len(times) < 2:
        return float("nan")
    return sum(units) / (times[-1] - times[0] + window) * 60.0


def run(quick: bool, work: Path) -> Section:
    items = 100 if quick else 750
    method = (
        f"The pipeline of benchmark 1 (describe + TIT-Score-LLM judge, 200 ms latency, concurrency 64) on the first "
        f"{items} items, against a server that admits {round(RPM * WINDOW / 60)} requests per sliding {WINDOW:g} s "
        f"(= {RPM:,}/min), or {round(TPM * WINDOW / 60):,} tokens per sliding {WINDOW:g} s (= {TPM:,}/min; a request "
        "asks for its prompt tokens + max_tokens and is settled to its usage once answered), and answers 429 with "
        "Retry-After beyond (OpenAI's tpm error body). Baseline: the limit itself."
    )

    def body(section: Section) -> None:
        data = synthetic(work, 200, 13)
        bench = fresh_dir(work / "rate-limit")
        table = Table(
            [
                "client",
                "items",
                "model calls",
                "429s (share of requests)",
                "steady achieved / min",
                "limit / min",
                "steady / limit",
                "whole run / min",
                "windows of sending",
                f"most admitted in any {WINDOW:g} s (limit)",
                "wall s",
                "failed items",
            ]
        )
        for case in CASES:
            m = measure_run(
                bench,
                data,
                64,
                cache=fresh_dir(bench / "cache"),
                limit=items,
                rpm=case.limit if case.told and case.kind == "rpm" else None,
                tpm=case.limit if case.told and case.kind == "tpm" else None,
                server_extra=case.server_args(),
            )
            _row(section, table, case, m)
        section.tables.append(table)
        section.notes += [
            f"steady achieved / min = units admitted (requests, or tokens as the server counted them) whose arrival "
            f"lies between one window ({WINDOW:g} s) after the first admission and one window before the last, "
            "divided by that span, x 60: the start-up ramp and the tail are left out. The goal told the limit: "
            ">= 95% of it, with 0 429s.",
            "whole run / min = admitted / (span from first to last admission + one window) x 60, the measure of the "
            "earlier runs: a sliding window admits at most limit x (T + W) / W over a span T, so even a perfect "
            "client scores only T / (T + W) of the limit on it (84% on a run 5.3 windows long: most of the gap "
            "the earlier 80% showed).",
            "429s (share of requests) = refused / all requests; the goal not told the limit: <= 5%.",
            "windows of sending = (last - first admission) / window; failed items = items with any failed variant "
            "after retries (lost items); the goal is 0.",
        ]

    return timed_section("rate_limit", TITLE, method, body)


def _row(section: Section, table: Table, case: Case, m: Measured) -> None:
    times, units = admitted(m.records, case.kind)
    steady = steady_per_minute(times, units, WINDOW)
    whole = whole_per_minute(times, units, WINDOW)
    refused = sum(1 for r in m.records if r["status"] == 429)
    share = refused / max(1, len(m.records))
    peak = most_in_window(times, WINDOW, units)
    section.headline(
        f"{case.kind} limit {case.limit:,.0f}/min, client {'told' if case.told else 'not told'} the limit",
        f"steady {steady:,.0f}/min ({steady / case.limit:.0%}), {refused} 429s ({share:.1%}), "
        f"{m.report['failed_items']} items lost",
        f"limit {case.limit:,.0f}/min",
    )
    table.add(
        case.label,
        m.report["n_items"],
        m.ok_requests,
        f"{refused} ({share:.1%})",
        fmt(steady, 0),
        f"{case.limit:,.0f}",
        f"{steady / case.limit:.1%}",
        fmt(whole, 0),
        fmt((times[-1] - times[0]) / WINDOW, 1) if len(times) > 1 else "-",
        f"{peak:,.0f} ({case.per_window:,})",
        fmt(m.report["wall"], 1),
        m.report["failed_items"],
    )


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
