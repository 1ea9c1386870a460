"""Benchmark 8: API pipeline against a thinking model's long-tailed latency, the client's
calls/s ceiling, and whether two worker processes raise it.

The pipeline of benchmark 1 (describe + TIT-Score-LLM judge per item, one model name so
one limiter bounds all in-flight requests) in a child process, against a loopback server
in its own process whose every request waits a seeded lognormal latency: median 2 s,
p95 8 s (sigma = ln 4 / 1.645 ~ 0.843, mean ~2.85 s). Ideal = a work-conserving lower
bound from the latencies the server actually drew: max(sum of latencies / concurrency,
the longest single latency). Zero-latency runs give the client's ceiling in calls/s; the
two-process run splits the items by prompt between two children sharing one cache.

  python benchmarks/long_tail.py [--quick]
"""

from __future__ import annotations

import csv
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_throughput import Measured, measure_run, pipeline_config, request_span, server_args  # noqa: E402
from doubles.server_draws import lognormal_sigma  # noqa: E402
from harness import (  # noqa: E402
    Section,
    Table,
    fmt,
    fresh_dir,
    read_jsonl,
    run_child,
    server_process,
    standalone,
    synthetic,
    timed_section,
)
from long_tail_bounds import chain_bound, item_chains, replay, saturated_utilisation  # noqa: E402

TITLE = "10. API pipeline on a long-tailed (thinking-model) latency; one process's ceiling"
MEDIAN, P95 = 2.0, 8.0
SIGMA = lognormal_sigma(MEDIAN, P95)
LONG_TAIL = ("--latency", str(MEDIAN), "--latency-sigma", f"{SIGMA:.6f}", "--seed", "0")
ZERO = ("--latency", "0")


@dataclass
class Sizes:
    prompts: int
    models: int
    concurrencies: tuple[int, ...]
    ceiling_concurrency: int


FULL = Sizes(200, 13, (128, 256), 256)
QUICK = Sizes(20, 13, (64,), 64)


def ideal_seconds(records: list[dict[str, Any]], concurrency: int) -> float:
    """max(sum of the answered requests' durations / concurrency, the longest duration):
    no schedule of these requests on `concurrency` slots finishes sooner."""
    durations = [r["finished"] - r["arrived"] for r in records if r["status"] == 200]
    return max(sum(durations) / concurrency, max(durations))


def manifest_items(data: Path) -> list[tuple[str, str]]:
    """(image sha256, prompt text) of each item, in manifest order."""
    images = {r["item_id"]: r["image_sha256"] for r in read_jsonl(data / "descriptions.jsonl")}
    return [(images[r["item_id"]], r["prompt"]) for r in read_jsonl(data / "manifest.jsonl")]


def bounds_row(table: Table, data: Path, m: Measured, concurrency: int) -> tuple[float, float]:
    """Add the run's bounds to `table`; returns (replay s, replay / ideal)."""
    ideal = ideal_seconds(m.records, concurrency)
    chains = item_chains(m.records, manifest_items(data))
    # the client's workers: twice the concurrency (titjudge.agents.graph.items_in_flight)
    schedule = replay(chains, concurrency, 2 * concurrency)
    replayed = max(f for _, f in schedule)
    answered = [(r["arrived"], r["finished"]) for r in m.records if r["status"] == 200]
    saturated, busy = saturated_utilisation(answered, concurrency)
    replay_saturated, replay_busy = saturated_utilisation(schedule, concurrency)
    span, wall = request_span(m), m.report["wall"]
    table.add(
        f"long tail, concurrency {concurrency}",
        fmt(ideal, 1),
        fmt(chain_bound(chains, concurrency), 1),
        fmt(replayed, 1),
        fmt(replayed / ideal),
        fmt(span, 1),
        fmt(span / replayed),
        fmt(wall / replayed),
        f"{100 * busy:.1f}% of {saturated:.1f} s",
        f"{100 * replay_busy:.1f}% of {replay_saturated:.1f} s",
        f"{wall - span:.1f} ({100 * (wall - span) / wall:.1f}%)",
    )
    return replayed, replayed / ideal


def split_by_prompt(data: Path) -> list[dict[str, str]]:
    """Two halves of the benchmark (manifest, pairs, ranks), split by prompt, beside it."""
    manifest = read_jsonl(data / "manifest.jsonl")
    prompts = sorted({row["prompt_id"] for row in manifest})
    halves = [set(prompts[: len(prompts) // 2]), set(prompts[len(prompts) // 2 :])]
    out = []
    for index, keep in enumerate(halves):
        files = {
            "manifest": str(data / f"manifest-{index}.jsonl"),
            "human_pairs": str(data / f"pairs-{index}.csv"),
            "ranks": str(data / f"ranks-{index}.csv"),
        }
        rows = [json.dumps(r) for r in manifest if r["prompt_id"] in keep]
        Path(files["manifest"]).write_text("\n".join(rows) + "\n", encoding="utf-8")
        for name, key in (("pairs.csv", "human_pairs"), ("ranks.csv", "ranks")):
            with open(data / name, newline="") as src, open(files[key], "w", newline="") as dst:
                reader = csv.DictReader(src)
                writer = csv.DictWriter(dst, fieldnames=reader.fieldnames or [])
                writer.writeheader()
                writer.writerows(r for r in reader if r["prompt_id"] in keep)
        out.append(files)
    return out


def two_processes(
    work: Path, data: Path, concurrency: int
) -> tuple[list[dict[str, Any]], Measured]:
    """Both halves at once, each child at `concurrency`, one server, one shared cache."""
    cache = fresh_dir(work / "cache-two")
    with server_process(server_args(data, *ZERO)) as server:
        configs = []
        for index, files in enumerate(split_by_prompt(data)):
            config = pipeline_config(data, server.url, cache, work / "runs", concurrency)
            config["data"] = files
            path = work / f"config-{index}.json"
            path.write_text(json.dumps(config))
            out = fresh_dir(work / "runs" / f"half-{index}")  # `--out`: a new or empty dir
            configs.append(["titjudge", str(path), "--out", str(out)])
        cpu_before = server.cpu_seconds()
        with ThreadPoolExecutor(2) as pool:
            reports = list(pool.map(lambda args: run_child("child_pipeline.py", args), configs))
        server_cpu = server.cpu_seconds() - cpu_before
        stats = server.stats(records=1_000_000)
    merged = Measured(
        reports[0],
        stats["total"],
        stats["by_status"].get("200", 0),
        stats["by_status"],
        stats["max_in_flight"],
        server_cpu,
        stats["records"],
    )
    return reports, merged


def _cpu_per_call(m: Measured, baseline: float) -> float:
    """Client CPU ms per answered call, `baseline` (CPU s of a run without calls) taken off."""
    return 1000 * (m.report["cpu"] - baseline) / m.ok_requests


def run(quick: bool, work: Path) -> Section:
    sizes = QUICK if quick else FULL
    data = synthetic(work, sizes.prompts, sizes.models)
    items = sizes.prompts * sizes.models
    bench = fresh_dir(work / "long-tail")
    method = (
        f"Synthetic benchmark {sizes.prompts} prompts x {sizes.models} models = {items:,} items; per item one "
        "describe call (image) and one TIT-Score-LLM judge call through litellm, `run_async` in a fresh child process "
        "with an empty cache, against a loopback OpenAI-compatible server in its own process. Long-tailed rows: "
        f"every request waits a seeded lognormal latency, median {MEDIAN:g} s, p95 {P95:g} s (sigma {SIGMA:.3f}, "
        f"mean ~{MEDIAN * 2.718281828 ** (SIGMA**2 / 2):.2f} s), as a thinking model answers. Ideal = max(sum of the "
        "latencies the server drew / concurrency, the longest one): a lower bound on any schedule of those calls. "
        "Ceiling rows: zero latency, so calls/s is what the client's CPU allows. Baseline: the ideal, and one process "
        "against two."
    )

    def body(section: Section) -> None:
        zero_cache = fresh_dir(bench / "cache-zero")
        zero = measure_run(
            bench, data, sizes.ceiling_concurrency, cache=zero_cache, server_extra=ZERO
        )
        cached = measure_run(bench, data, sizes.ceiling_concurrency, cache=zero_cache)
        # a cached re-run never imports litellm; a run that calls does, once
        imports = run_child("child_pipeline.py", ["litellm-import"])["cpu"]
        baseline = cached.report["cpu"] + imports
        tails = {
            c: measure_run(
                bench, data, c, cache=fresh_dir(bench / f"cache-c{c}"), server_extra=LONG_TAIL
            )
            for c in sizes.concurrencies
        }
        halves, both = two_processes(bench, data, sizes.ceiling_concurrency // 2)
        table = Table(
            [
                "run",
                "items",
                "model calls",
                "wall s",
                "ideal s",
                "wall / ideal",
                "request span s",
                "span / ideal",
                "calls / s while requests flowed",
                "client CPU s",
                "client CPU ms / call",
                "max in flight",
                "failed items",
            ]
        )
        bounds = Table(
            [
                "run",
                "ideal s",
                "chain bound s",
                "replay s",
                "replay / ideal",
                "request span s",
                "span / replay",
                "wall / replay",
                "slots busy, saturated phase (client)",
                "slots busy, saturated phase (replay)",
                "start-up + evaluator s (share of wall)",
            ],
            caption="What bounds the long-tailed runs: the same calls' latencies, replayed",
        )
        for concurrency, m in tails.items():
            ideal = ideal_seconds(m.records, concurrency)
            span = request_span(m)
            ratio = m.report["wall"] / ideal
            replayed, replay_ratio = bounds_row(bounds, data, m, concurrency)
            section.headline(
                f"long-tailed latency (median {MEDIAN:g} s, p95 {P95:g} s), {items:,} items, "
                f"concurrency {concurrency}: wall / ideal",
                f"x{ratio:.2f} ({m.report['wall']:.1f} s, ideal {ideal:.1f} s)",
                "target x1.15",
            )
            section.headline(
                f"concurrency {concurrency}: the best a client of this design does on these "
                "draws (replay / ideal), and this client's efficiency against it "
                "(replay / request span)",
                f"replay x{replay_ratio:.2f} ({replayed:.1f} s); client "
                f"{100 * replayed / span:.1f}% of it (span {span:.1f} s)",
                f"wall / replay x{m.report['wall'] / replayed:.2f}",
            )
            table.add(
                f"long tail, concurrency {concurrency}",
                f"{m.report['n_items']:,}",
                f"{m.ok_requests:,}",
                fmt(m.report["wall"], 1),
                fmt(ideal, 1),
                fmt(ratio),
                fmt(span, 1),
                fmt(span / ideal),
                fmt(m.ok_requests / span, 1),
                fmt(m.report["cpu"], 1),
                fmt(_cpu_per_call(m, baseline)),
                m.max_in_flight,
                m.report.get("failed_items", 0),
            )
        one_rate = zero.ok_requests / request_span(zero)
        two_rate = both.ok_requests / request_span(both)
        two_cpu = sum(r["cpu"] for r in halves) - 2 * baseline
        table.add(
            f"zero latency, one process, concurrency {sizes.ceiling_concurrency} (ceiling)",
            f"{zero.report['n_items']:,}",
            f"{zero.ok_requests:,}",
            fmt(zero.report["wall"], 1),
            "-",
            "-",
            fmt(request_span(zero), 1),
            "-",
            fmt(one_rate, 1),
            fmt(zero.report["cpu"], 1),
            fmt(_cpu_per_call(zero, baseline)),
            zero.max_in_flight,
            zero.report.get("failed_items", 0),
        )
        table.add(
            f"zero latency, two processes (half the prompts each, concurrency "
            f"{sizes.ceiling_concurrency // 2} each, one shared cache)",
            f"{sum(r['n_items'] for r in halves):,}",
            f"{both.ok_requests:,}",
            fmt(max(r["wall"] for r in halves), 1),
            "-",
            "-",
            fmt(request_span(both), 1),
            "-",
            fmt(two_rate, 1),
            fmt(sum(r["cpu"] for r in halves), 1),
            fmt(1000 * two_cpu / both.ok_requests),
            both.max_in_flight,
            sum(r.get("failed_items", 0) for r in halves),
        )
        table.add(
            "fully cached re-run, one process (CPU baseline)",
            f"{cached.report['n_items']:,}",
            f"{cached.requests} (all from the cache)",
            fmt(cached.report["wall"], 1),
            "-",
            "-",
            "-",
            "-",
            "-",
            fmt(cached.report["cpu"], 1),
            "-",
            cached.max_in_flight,
            cached.report.get("failed_items", 0),
        )
        section.headline(
            "client ceiling at zero latency, one process: calls/s",
            f"{one_rate:,.1f} calls/s ({_cpu_per_call(zero, baseline):.2f} ms CPU / call)",
            f"two processes {two_rate:,.1f} calls/s",
        )
        section.tables += [table, bounds]
        server_cpu = 1000 * zero.server_cpu / zero.ok_requests
        section.notes += [
            "calls / s while requests flowed = answered calls / (last reply - first request arrival), server clock; "
            "request span / ideal leaves out start-up, data loading and the evaluator.",
            "client CPU ms / call = (the run's CPU - baseline) / calls, baseline = the fully cached re-run's CPU + "
            f"{imports:.2f} s to import litellm (which a cached re-run skips): start-up, data loading and the "
            "evaluator cancel out; for two processes, both children's CPU minus twice the baseline.",
            "chain bound = max(sum of the calls' latencies / concurrency, the longest describe + judge latency of "
            "one item): a judge call cannot start before its item's description is back, so even a client that knew "
            "every latency in advance finishes no sooner. The fake server names the item of each request (the image "
            "described, or the image whose description a judge call carries and the judge's prompt), which ties "
            "each judge call to its describe call.",
            "replay = the makespan of a zero-overhead client of titjudge's design on exactly these latencies: items "
            "in manifest order taken by 2 x concurrency workers, concurrency slots served first come first served, "
            "an item's judge call queued the moment its describe call returns, a describe call shared by items "
            "with the same image made once. It cannot start the longest calls first (it does not know them), and "
            "the run ends in a drain on the last long calls: the best any client of this design does on these "
            "draws, so wall / ideal cannot reach replay / ideal. span / replay and wall / replay: this client "
            "against that (about 1.00 = no client overhead).",
            "slots busy, saturated phase = busy slot-seconds / (concurrency x the phase's length), over the "
            "saturated phase: from the first call's start to the concurrency-th latest finish, the last moment at "
            "least concurrency calls were unfinished (after it the run can only drain). Client: the answered calls "
            "as the server logged them; replay: the replayed schedule, same definition.",
            "start-up + evaluator = wall - request span: the child's start-up, data loading, graph building and "
            "the metrics after the last reply, which no request overlaps.",
            f"the loopback server (its own process, same 2 cores) used {server_cpu:.2f} ms CPU per call in the "
            "zero-latency run: at the ceiling, client and server compete for the cores.",
        ]

    return timed_section("long_tail", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
