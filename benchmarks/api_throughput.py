"""Benchmarks 1 and 6: API pipeline throughput and peak memory, against a loopback
OpenAI-compatible server with 200 ms latency running in its own process.

Every pipeline run is a child process (`child_pipeline.py`), so each has its own wall
time, CPU time and peak RSS, and a fresh server process per run gives clean request
counts. The describer and the LLM judge use one model name, so one limiter bounds every
in-flight request to the concurrency C (the model's `concurrency` is set to C too: the
litellm backend otherwise caps a model at 32), and "ideal" = calls x latency / C holds.

  python benchmarks/api_throughput.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    KEY_ENV,
    Section,
    Table,
    fmt,
    fresh_dir,
    run_child,
    server_process,
    synthetic,
    timed_section,
)

LATENCY = 0.2
MODEL = "litellm:openai/bench-vlm"


@dataclass
class Sizes:
    prompts: int
    models: int
    concurrencies: tuple[int, ...]
    subset: int  # items for the slow sequential runs (extrapolated)

    @property
    def items(self) -> int:
        return self.prompts * self.models


FULL = Sizes(200, 13, (1, 16, 64, 128), subset=100)
QUICK = Sizes(20, 13, (1, 16, 64, 128), subset=20)


@dataclass
class Measured:
    """One pipeline run as the server and the child saw it."""

    report: dict[str, Any]
    requests: int
    ok_requests: int
    by_status: dict[str, int]
    max_in_flight: int
    server_cpu: float
    records: list[dict[str, Any]]


def pipeline_config(
    data: Path,
    url: str,
    cache: Path,
    out: Path,
    concurrency: int,
    rpm: float | None = None,
    tpm: float | None = None,
    judge: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The pipeline's config: describer and LLM judge on the server at `url`, one model name
    (one limiter) unless `judge` (merged into the judge's entry) names another."""
    model: dict[str, Any] = {
        "model": MODEL,
        "api_base": url,
        "api_key_env": KEY_ENV,
        "concurrency": concurrency,
        **({"rpm": rpm} if rpm else {}),
        **({"tpm": tpm} if tpm else {}),
    }
    return {
        "name": "bench",
        "data": {
            "manifest": str(data / "manifest.jsonl"),
            "human_pairs": str(data / "pairs.csv"),
            "ranks": str(data / "ranks.csv"),
        },
        "describer": dict(model),
        "judges": [{"name": "tit_llm", "kind": "llm", **model, **(judge or {})}],
        "run": {"concurrency": concurrency, "cache_dir": str(cache), "out": str(out)},
    }


def server_args(data: Path, *extra: str) -> list[str]:
    return [
        "--latency",
        str(LATENCY),
        "--responder",
        "auto",
        "--descriptions",
        str(data / "descriptions.jsonl"),
        *extra,
    ]


def measure_run(
    work: Path,
    data: Path,
    concurrency: int,
    *,
    cache: Path,
    limit: int | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    server_extra: tuple[str, ...] = (),
    time_eval: bool = False,
    judge: dict[str, Any] | None = None,
    package: str | None = None,
) -> Measured:
    """One `run_async` child against a fresh server process."""
    with server_process(server_args(data, *server_extra)) as server:
        config_path = work / "config.json"
        config_path.write_text(
            json.dumps(
                pipeline_config(
                    data, server.url, cache, work / "runs", concurrency, rpm, tpm, judge
                )
            )
        )
        cpu_before = server.cpu_seconds()
        # `--out` must name a new or empty dir (a run never overwrites another)
        out = fresh_dir(work / "runs" / "bench")
        args = ["titjudge", str(config_path), "--out", str(out)]
        args += [
            *(["--limit", str(limit)] if limit else []),
            *(["--time-eval"] if time_eval else []),
        ]
        report = run_child("child_pipeline.py", args, package=package)
        server_cpu = server.cpu_seconds() - cpu_before
        stats = server.stats(records=1_000_000)
    return Measured(
        report,
        stats["total"],
        stats["by_status"].get("200", 0),
        stats["by_status"],
        stats["max_in_flight"],
        server_cpu,
        stats["records"],
    )


def _seed_loop(work: Path, data: Path, limit: int) -> Measured:
    with server_process(server_args(data)) as server:
        cpu_before = server.cpu_seconds()
        report = run_child(
            "child_pipeline.py", ["seed-loop", str(data), server.url, "--limit", str(limit)]
        )
        server_cpu = server.cpu_seconds() - cpu_before
        stats = server.stats(records=1_000_000)
    return Measured(
        report,
        stats["total"],
        stats["by_status"].get("200", 0),
        stats["by_status"],
        stats["max_in_flight"],
        server_cpu,
        stats["records"],
    )


def _throughput(section: Section, work: Path, data: Path, sizes: Sizes) -> dict[str, Measured]:
    scale = sizes.items / sizes.subset
    runs: dict[str, Measured] = {"seed": _seed_loop(work, data, sizes.subset)}
    for concurrency in sizes.concurrencies:
        limit = sizes.subset if concurrency == 1 else None
        cache = fresh_dir(work / f"cache-c{concurrency}")
        runs[f"c{concurrency}"] = measure_run(
            work, data, concurrency, cache=cache, limit=limit, time_eval=concurrency == 64
        )
    runs["cached"] = cached = measure_run(work, data, 64, cache=work / "cache-c64")
    seed, c64 = runs["seed"], runs["c64"]
    seed_wall = extrapolated_wall(seed, scale)
    table = Table(
        [
            "run",
            "items",
            "model calls",
            "wall s",
            "ideal s",
            "wall / ideal",
            "speed-up vs seed loop",
            "calls / s while requests flowed",
            "client CPU s",
            "client CPU ms / call",
            "server CPU s",
            "max in flight",
            "failed items",
        ]
    )

    def row(label: str, m: Measured, concurrency: int, factor: float) -> None:
        calls, wall = m.ok_requests * factor, extrapolated_wall(m, factor)
        ideal = calls * LATENCY / concurrency
        per_call = (
            "-"
            if factor != 1.0
            else fmt(1000 * (m.report["cpu"] - cached.report["cpu"]) / m.ok_requests)
        )
        if m is not seed:
            section.headline(
                f"API pipeline, {sizes.items:,} items, 200 ms latency, concurrency {concurrency}: wall",
                f"{wall:,.1f} s (ideal {ideal:,.1f} s, x{wall / ideal:.1f})",
                f"seed loop {seed_wall:,.1f} s",
            )
        table.add(
            label,
            f"{int(m.report['n_items'] * factor):,}",
            f"{calls:,.0f}",
            fmt(wall, 1),
            fmt(ideal, 1),
            fmt(wall / ideal),
            "1.00 (baseline)" if m is seed else fmt(seed_wall / wall),
            fmt(m.ok_requests / request_span(m), 1),
            fmt(m.report["cpu"], 1) + (" (subset)" if factor != 1.0 else ""),
            per_call,
            fmt(m.server_cpu * factor, 1),
            m.max_in_flight,
            f"{m.report.get('failed_items', 0) * factor:.0f}",
        )

    row(
        f"seed loop: bare litellm, one image at a time ({sizes.subset} items, extrapolated)",
        seed,
        1,
        scale,
    )
    for concurrency in sizes.concurrencies:
        subset = concurrency == 1
        label = f"titjudge run, concurrency {concurrency}" + (
            f" ({sizes.subset} items, extrapolated)" if subset else ""
        )
        row(label, runs[f"c{concurrency}"], concurrency, scale if subset else 1.0)
    section.headline(
        f"API pipeline, {sizes.items:,} items, concurrency 64: fully cached re-run",
        f"{cached.report['wall']:.1f} s, {cached.requests} requests",
        f"fresh run {c64.report['wall']:.1f} s",
    )
    table.add(
        "titjudge run, concurrency 64, fully cached re-run",
        f"{cached.report['n_items']:,}",
        f"{cached.requests} (all answered from the cache)",
        fmt(cached.report["wall"], 1),
        "0.0",
        "-",
        fmt(seed_wall / cached.report["wall"]),
        "-",
        fmt(cached.report["cpu"], 1),
        "-",
        fmt(cached.server_cpu, 1),
        cached.max_in_flight,
        cached.report["failed_items"],
    )
    section.tables.append(table)
    section.notes += [
        f"ideal = model calls x {LATENCY:g} s / concurrency (the seed loop's concurrency is 1). Calls are those the "
        "server answered 200; a description shared by two identical images is asked once.",
        "calls / s while requests flowed = calls / (last reply - first request arrival), server clock: the "
        "pipeline's throughput without start-up and evaluation.",
        "client CPU ms / call = (the run's CPU - the cached re-run's CPU) / calls: start-up, data loading and the "
        "evaluator cancel out. The client is one event loop on one core, so 1000 / that is its ceiling in calls/s "
        f"whatever the concurrency; the ideal needs concurrency / {LATENCY:g} s calls/s (320 at 64, 640 at 128). "
        "Benchmark 3 shows how much of the CPU per call is litellm itself.",
        f"the evaluator (metrics, 1000 bootstrap resamples) took {c64.report.get('evaluate_seconds', float('nan')):.2f}"
        f" s of the {c64.report['wall']:.1f} s run at concurrency 64.",
        f"the concurrency-1 and seed-loop rows ran the first {sizes.subset} items. Extrapolated wall = fixed part + "
        f"{scale:g} x the span from the first request's arrival to the last reply (server clock); fixed part = the "
        "child's wall minus that span (imports, data loading, evaluator, run dir). Calls and server CPU are scaled "
        f"by {scale:g}.",
    ]
    return runs


def request_span(m: Measured) -> float:
    """Seconds from the first request's arrival to the last reply (server clock)."""
    return max(r["finished"] for r in m.records) - min(r["arrived"] for r in m.records)


def extrapolated_wall(m: Measured, scale: float) -> float:
    """Wall time of `scale` times the items: the request span scales, the rest is fixed."""
    if scale == 1.0:
        return float(m.report["wall"])
    span = request_span(m)
    fixed = max(0.0, m.report["wall"] - span)
    return fixed + span * scale


def _memory(runs: dict[str, Measured]) -> Section:
    method = (
        "Peak resident set (VmHWM) of the child process that ran each pipeline, read by the child at the "
        "end. Baseline: a child that only imports what a run imports (titjudge, litellm) and does nothing."
    )

    def body(section: Section) -> None:
        idle = run_child("child_pipeline.py", ["idle"])
        table = Table(["process", "items", "peak RSS MiB", "over the import-only floor MiB"])
        table.add("import-only floor (baseline)", "-", fmt(idle["peak_rss_mib"], 0), "-")
        seed = runs.get("seed")
        if seed is not None:
            table.add(
                "seed loop (bare litellm; imports less than a run)",
                seed.report["n_items"],
                fmt(seed.report["peak_rss_mib"], 0),
                "-",
            )
        for key, label in (
            ("c16", "fresh run, concurrency 16"),
            ("c64", "fresh run, concurrency 64"),
            ("c128", "fresh run, concurrency 128"),
            ("cached", "fully cached re-run, concurrency 64"),
        ):
            if key in runs:
                rss = runs[key].report["peak_rss_mib"]
                if key in ("c64", "cached"):
                    section.headline(
                        f"peak RSS, {label}, {runs[key].report['n_items']:,} items",
                        f"{rss:,.0f} MiB",
                        f"import-only floor {idle['peak_rss_mib']:,.0f} MiB",
                    )
                table.add(
                    label,
                    f"{runs[key].report['n_items']:,}",
                    fmt(rss, 0),
                    fmt(rss - idle["peak_rss_mib"], 0),
                )
        section.tables.append(table)

    return timed_section("memory", "6. Memory: peak RSS of a full synthetic run", method, body)


def run(quick: bool, work: Path) -> list[Section]:
    sizes = QUICK if quick else FULL
    data = synthetic(work, sizes.prompts, sizes.models)
    bench = fresh_dir(work / "api")
    method = (
        f"Synthetic benchmark {sizes.prompts} prompts x {sizes.models} models = {sizes.items:,} items; per item one "
        f"describe call (image) and one TIT-Score-LLM judge call, through litellm to a loopback OpenAI-compatible "
        f"server ({LATENCY * 1000:.0f} ms latency, its own process). Each run is `titjudge.run.runner.run_async` "
        "in a fresh child process with an empty cache (the whole run: load data, graph, evaluator with 1000 "
        "bootstrap resamples, run dir). Baseline, measured in the same session: the seed scripts' way, a plain "
        "loop that describes one image then judges it, each with a bare `litellm.acompletion`."
    )
    runs: dict[str, Measured] = {}

    def throughput(section: Section) -> None:
        runs.update(_throughput(section, bench, data, sizes))

    first = timed_section("throughput", "1. API pipeline throughput", method, throughput)
    return [first, _memory(runs)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for section in run(args.quick, Path(tmp)):
            print(section.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
