"""A run's spend with `batch: true` against the same run online, and whether the two share
one cache.

  python benchmarks/batch_spend.py [--quick]
  python benchmarks/batch_spend.py serve --descriptions D [--turnaround S] [--latency M ...]

The run: 260 items (20 prompts x 13 simulated T2I models of the synthetic benchmark); the
describer (`litellm:openai/vlm`, priced by its `price` option) and the LLM judge
(`litellm:openai/gpt-4o-mini`, priced by litellm's map, which lists `_batches` rates for it),
plus the lexical judge. The server is the tests' OpenAI batch double (`doubles.batch_server`:
files and batches endpoints beside the chat route) in a process of its own (`serve`): online
chat requests wait a seeded lognormal latency (median 2 s, p95 8 s, as `long_tail.py`), a
batch job is `validating` at its first look, then `in_progress` for `--turnaround` seconds
after its creation, then its lines are answered by the same responder as online and it is
`completed`. Cases, each on a fresh cache: the run online; the run with `batch: true` on both
models; and the batch config re-run over the online run's cache (must send nothing and
spend $0: online and batch answers share their cache keys). `titjudge estimate --json` is
taken before each run.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402, F401  (puts tests/ on sys.path for the doubles package)
from doubles.batch_server import BatchServer  # noqa: E402
from doubles.server import build_responder, load_descriptions  # noqa: E402
from doubles.server_draws import lognormal_sigma  # noqa: E402
from estimate_cost import PRICE, estimate, titjudge  # noqa: E402
from harness import (  # noqa: E402
    HERE,
    KEY_ENV,
    Section,
    ServerProcess,
    Table,
    fmt,
    fresh_dir,
    latest_run_dir,
    server_process,
    standalone,
    synthetic,
    timed_section,
)

TITLE = "16. Batch mode: a run's spend against the same run online"
MEDIAN, P95 = 2.0, 8.0
SIGMA = lognormal_sigma(MEDIAN, P95)
#: seconds a batch job stays in progress (real jobs: minutes to 24 h; compressed here)
TURNAROUND, QUICK_TURNAROUND = 20.0, 5.0
#: seconds between two looks at a model's open jobs (`batch_poll`)
POLL = 2.0
DESCRIBER, JUDGE = "litellm:openai/vlm", "litellm:openai/gpt-4o-mini"


class TurnaroundBatchServer(BatchServer):
    """The batch double whose jobs stay in progress `turnaround` seconds after creation;
    `GET /batch-stats` gives the jobs created, the lines answered, the looks at jobs and each
    job's times (epoch seconds): created, its lines begun, its lines done."""

    def __init__(self, *args: Any, turnaround: float = 0.0, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.turnaround = turnaround
        #: GET /v1/batches/{id} received (titjudge's looks at its jobs)
        self.polls = 0
        self.times: dict[str, dict[str, float]] = {}

    def make_app(self) -> Any:
        from aiohttp import web

        app = super().make_app()

        async def stats(http: web.Request) -> web.Response:
            return web.json_response(
                {
                    "jobs": self.batch_creates,
                    "lines": self.lines_answered,
                    "polls": self.polls,
                    "times": self.times,
                }
            )

        app.router.add_get("/batch-stats", stats)
        return app

    async def _batch(self, http: Any) -> Any:
        from aiohttp import web

        self.polls += 1
        found = self.batches.get(http.match_info["id"])
        made = self.times.get(http.match_info["id"], {}).get("created", 0.0)
        waiting = found is not None and found["status"] == "in_progress"
        if waiting and time.time() < made + self.turnaround:
            return web.json_response({k: v for k, v in found.items() if k[0] != "_"})
        return await super()._batch(http)

    async def _create_batch(self, http: Any) -> Any:
        reply = await super()._create_batch(http)
        if reply.status == 200:
            self.times[json.loads(reply.body)["id"]] = {"created": time.time()}
        return reply

    async def _run(self, batch: dict[str, Any]) -> None:
        self.times[batch["id"]]["begun"] = time.time()
        await super()._run(batch)
        self.times[batch["id"]]["done"] = time.time()


def serve(argv: list[str]) -> int:
    """Serve the batch double until SIGTERM; print its base URL first."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(prog="batch_spend.py serve")
    parser.add_argument("--descriptions", type=Path, required=True)
    parser.add_argument("--turnaround", type=float, default=TURNAROUND)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--latency-sigma", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)  # the server threads inherit the mask
    server = TurnaroundBatchServer(
        build_responder("auto", descriptions=load_descriptions(args.descriptions)),
        latency=args.latency,
        latency_sigma=args.latency_sigma,
        seed=args.seed,
        turnaround=args.turnaround,
    )
    print(server.start(), flush=True)
    signal.sigwait(signals)
    server.stop()
    return 0


def config(data: Path, url: str, work: Path, name: str, batch: bool) -> dict[str, Any]:
    served: dict[str, Any] = {"api_base": url, "api_key_env": KEY_ENV}
    if batch:
        served |= {"batch": True, "batch_poll": POLL}
    return {
        "name": name,
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": DESCRIBER, "price": PRICE, **served},
        "judges": [
            {"name": "tit_llm", "kind": "llm", "model": JUDGE, **served},
            {"name": "lexical", "kind": "lexical"},
        ],
        "run": {"cache_dir": str(work / "cache"), "out": str(work / "runs"), "concurrency": 32},
    }


def batch_stats(server: ServerProcess) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(f"{server.root}/batch-stats", timeout=30) as reply:
        return dict(json.loads(reply.read()))


def one_run(server: ServerProcess, path: Path, out: Path, name: str) -> dict[str, Any]:
    """Estimate, then run one config; what the server saw and what summary.json says."""
    found, _ = estimate(path)
    online0, batch0 = server.stats()["total"], batch_stats(server)
    started = time.time()
    _, wall = titjudge("run", str(path))
    ended = time.time()
    online1, batch1 = server.stats()["total"], batch_stats(server)
    summary = json.loads((latest_run_dir(out / name) / "summary.json").read_text())
    return {
        "estimate": found,
        "wall": wall,
        "online": online1 - online0,
        "jobs": batch1["jobs"] - batch0["jobs"],
        "lines": batch1["lines"] - batch0["lines"],
        "polls": batch1["polls"] - batch0["polls"],
        "times": (
            started,
            [t for k, t in batch1["times"].items() if k not in batch0["times"]],
            ended,
        ),
        "summary": summary,
        "spent": sum(u["cost"] or 0.0 for u in summary["usage"].values()),
        "failed": summary.get("failed_items", 0),
    }


def run(quick: bool, work: Path) -> Section:
    prompts = 4 if quick else 20
    items = prompts * 13
    turnaround = QUICK_TURNAROUND if quick else TURNAROUND
    method = (
        f"`benchmarks/batch_spend.py`: {items} items ({prompts} prompts x 13 models of the synthetic "
        "benchmark); describer `litellm:openai/vlm` (its `price` option: $1.25 / $10 per 1M tokens) and "
        "LLM judge `litellm:openai/gpt-4o-mini` (litellm's map, which has `_batches` rates for it), "
        "lexical judge, concurrency 32. The server is the OpenAI batch double (`tests/doubles/batch_server.py`) "
        f"in its own process: online chat requests wait a seeded lognormal latency (median {MEDIAN:g} s, "
        f"p95 {P95:g} s); a batch job is in progress {turnaround:g} s after its creation (real jobs take "
        f"minutes to 24 h), then answered by the same responder; `batch_poll` {POLL:g} s. Each case on a "
        "fresh cache except the re-run, which uses the online case's cache. `titjudge estimate --json` "
        "before each run; spend = the sum of `usage[*].cost` in the run's summary.json; calls sent online "
        "and batch jobs / lines as the server counted them."
    )

    def body(section: Section) -> None:
        data = synthetic(work, prompts, 13)
        serve_cmd = [sys.executable, str(HERE / "batch_spend.py"), "serve"]
        args = [
            "--descriptions",
            str(data / "descriptions.jsonl"),
            "--turnaround",
            str(turnaround),
            "--latency",
            str(MEDIAN),
            "--latency-sigma",
            f"{SIGMA:.6f}",
        ]
        online_dir = fresh_dir(work / "batch-spend-online")
        batch_dir = fresh_dir(work / "batch-spend-batch")
        cases: dict[str, dict[str, Any]] = {}
        with server_process(args, work / "batch-server.log", command=serve_cmd) as server:
            for case, base, batch, name in (
                ("online", online_dir, False, "online"),
                ("batch", batch_dir, True, "batch"),
                ("batch re-run over the online cache", online_dir, True, "rerun"),
            ):
                path = base / f"{name}.json"
                path.write_text(json.dumps(config(data, server.url, base, name, batch)))
                cases[case] = one_run(server, path, base / "runs", name)
        report(section, cases, items)

    return timed_section("batch_spend", TITLE, method, body)


def report(section: Section, cases: dict[str, dict[str, Any]], items: int) -> None:
    online = cases["online"]["spent"]
    table = Table(
        [
            "case",
            "calls estimated",
            "calls sent online",
            "batch jobs",
            "batch lines",
            "job polls",
            "estimate $",
            "worst case $",
            "spent $",
            "estimate / spent",
            "spent / online spent",
            "failed items",
            "wall s",
        ]
    )
    for case, got in cases.items():
        found, spent = got["estimate"], got["spent"]
        table.add(
            case,
            found["calls"],
            got["online"],
            got["jobs"],
            got["lines"],
            got["polls"],
            fmt(found["usd"], 4),
            fmt(found["usd_max"], 4),
            fmt(spent, 4),
            fmt(found["usd"] / spent) if spent else "-",
            fmt(spent / online, 3) if online else "-",
            got["failed"],
            fmt(got["wall"], 1),
        )
    section.tables.append(table)
    roles = Table(["usage role", "online $", "batch $", "batch / online", "tokens in / out"])
    on, off = cases["online"]["summary"]["usage"], cases["batch"]["summary"]["usage"]
    for role in sorted(set(on) | set(off)):
        a, b = on.get(role, {}), off.get(role, {})
        ratio = fmt((b.get("cost") or 0) / a["cost"], 3) if a.get("cost") else "-"
        tokens = f"{a.get('tokens_in', '?')} / {a.get('tokens_out', '?')} online"
        if (a.get("tokens_in"), a.get("tokens_out")) != (b.get("tokens_in"), b.get("tokens_out")):
            tokens += f", {b.get('tokens_in', '?')} / {b.get('tokens_out', '?')} batch"
        else:
            tokens += ", the same in batch"
        roles.add(role, fmt(a.get("cost") or 0, 4), fmt(b.get("cost") or 0, 4), ratio, tokens)
    section.tables.append(roles)
    section.tables.append(timeline(cases["batch"]["times"]))
    batch = cases["batch"]
    section.headline(
        f"batch vs online spend, {items} items",
        f"${batch['spent']:.4f} batch = {batch['spent'] / online:.3f}x online"
        f" (estimate ${batch['estimate']['usd']:.4f}, worst case ${batch['estimate']['usd_max']:.4f})",
        f"online ${online:.4f}",
    )
    rerun = cases["batch re-run over the online cache"]
    shared = rerun["online"] == 0 and rerun["jobs"] == 0 and rerun["spent"] == 0
    verdict = (
        "holds"
        if shared
        else f"FAILS: {rerun['online']} online calls, {rerun['jobs']} batch jobs, ${rerun['spent']:.4f}"
    )
    section.notes.append(
        "the batch run's wall is two rounds of jobs (the describer's, then the judge's: it reads "
        "the descriptions), each the job's turnaround plus titjudge's own work before and after "
        "it (the timeline; README's profile: each line's body is built by litellm's "
        "`return_raw_request`, once per line); real turnaround is minutes to 24 h"
    )
    section.notes.append(
        f"check: the batch config re-run over the online run's cache sends nothing and spends $0: {verdict}"
    )
    section.headline(
        f"batch config over an online run's cache, {items} items",
        f"{rerun['online']} calls, {rerun['jobs']} jobs, ${rerun['spent']:.4f} ({verdict.split(':')[0]})",
        "must be 0 calls, 0 jobs, $0",
    )


def timeline(times: tuple[float, list[dict[str, float]], float]) -> Table:
    """Where the batch run's wall went, from the server's times of its jobs."""
    started, jobs, ended = times
    table = Table(["batch run, from the server's clock", "s"])
    table.caption = "where the batch case's wall went"
    last = started
    for n, job in enumerate(sorted(jobs, key=lambda j: j["created"]), 1):
        before = "run start" if n == 1 else f"job {n - 1} done"
        table.add(
            f"{before} -> job {n} created (titjudge builds and uploads its lines)",
            fmt(job["created"] - last, 1),
        )
        if "begun" in job and "done" in job:
            table.add(
                f"job {n} in progress until a look found it due (turnaround + poll)",
                fmt(job["begun"] - job["created"], 1),
            )
            table.add(f"job {n}: the double answers its lines", fmt(job["done"] - job["begun"], 1))
            last = job["done"]
    table.add(
        "last job done -> run exits (titjudge reads the results, runs from them, writes its files)",
        fmt(ended - last, 1),
    )
    table.add("whole run (child process wall)", fmt(ended - started, 1))
    return table


def main() -> int:
    if sys.argv[1:2] == ["serve"]:
        return serve(sys.argv[2:])
    return standalone(run, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
