"""Benchmark 22: the workbench at scale, 50 runs of LPG-Bench size (2,600 images, 15,600 pairs
each).

One real run (`titjudge run`: the synthetic benchmark 200 prompts x 13 models, replayed
descriptions, the lexical judge) is copied 50 times under one folder (each copy a whole run
dir: the workbench reads and checks every one as if it were its own run; their numbers are
the same, which changes no cost measured here). `titjudge view DIR --port P` runs in a child
process; the parent times the requests a browser makes over loopback: the first page (the
page, then /api/runs: every run's record read and checked against its files.json), a pairs
page of two runs the first time (their audits read), then each filter again (median of 5).
Baseline, in the same run: the same facts the way a script would get them, with no checks:
the 50 runs' metrics.json and summary.json read with json.load (the runs page's floor), and
the two runs' items.jsonl and pairs.csv read and every pair classified in plain Python (the
floor of a first pairs page).

  python benchmarks/workbench_scale.py [--quick]
"""

from __future__ import annotations

import csv
import json
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402, F401
from harness import REPO, Section, Table, child_env, fmt, timed_section  # noqa: E402

TITLE = "22. The workbench at scale: 50 runs x 15,600 pairs"
TARGETS = "targets (issue 51): the first page under 1 s, a filter under 300 ms"


def make_runs(work: Path, copies: int, prompts: int, models: int) -> Path:
    """`copies` copies of one real run under work/wb-runs/bench/."""
    from titjudge.cli.demo import demo_config

    data = harness.synthetic(work, prompts, models)
    root = work / "wb-runs"
    if (root / ".complete").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    config = demo_config(data, work / "wb-one", None)
    config["name"] = "bench"
    path = work / "wb.yaml"
    path.write_text(json.dumps(config))
    done = subprocess.run(
        [sys.executable, "-m", "titjudge", "run", str(path)],
        env=child_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the run failed: {done.stderr[-500:]}")
    one = harness.latest_run_dir(work / "wb-one" / "runs" / "bench")
    for number in range(copies):
        shutil.copytree(one, root / "bench" / f"copy-{number:02d}")
    (root / ".complete").write_text("ok")
    return root


def get(url: str) -> tuple[float, bytes]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as response:
        body = response.read()
    return time.perf_counter() - started, body


def baseline_runs(root: Path) -> float:
    started = time.perf_counter()
    for run in sorted(root.rglob("metrics.json")):
        json.loads(run.read_text())
        json.loads((run.parent / "summary.json").read_text())
    return time.perf_counter() - started


def baseline_pairs(root: Path) -> float:
    """Two runs' scores and pairs read, every pair classified agree / other: a script's
    first pairs page, no checks."""
    started = time.perf_counter()
    runs = sorted(p.parent for p in root.rglob("items.jsonl"))[:2]
    pairs_file = None
    for run in runs:
        scores = {}
        with (run / "items.jsonl").open() as handle:
            for line in handle:
                row = json.loads(line)
                scores[row["item_id"]] = row["score"]
        if pairs_file is None:
            text = (run / "config.yaml").read_text()
            pairs_file = next(
                Path(line.split(":", 1)[1].strip().strip("'\""))
                for line in text.splitlines()
                if line.strip().startswith("human_pairs:")
            )
        with pairs_file.open() as handle:
            agree = sum(
                1
                for row in csv.DictReader(handle)
                if row["winner"] != "tie"
                and (scores[row["item_a"]] > scores[row["item_b"]]) == (row["winner"] == "a")
            )
        assert agree >= 0
    return time.perf_counter() - started


def run(quick: bool, work: Path) -> Section:
    copies, prompts, models = (6, 20, 13) if quick else (50, 200, 13)
    method = (
        f"{copies} copies of one real run ({prompts} prompts x {models} models: "
        f"{prompts * models:,} images, {prompts * models * (models - 1) // 2:,} pairs; replayed "
        "descriptions, lexical judge) under one folder. `titjudge view DIR` in a child process; "
        "the parent times each request over loopback (urllib). Baseline, same run: the runs' "
        "metrics.json and summary.json read with json.load (no checks), and two runs' "
        "items.jsonl and pairs.csv read and every pair classified in plain Python."
    )

    def body(section: Section) -> None:
        root = make_runs(work, copies, prompts, models)
        port = 8790
        proc = subprocess.Popen(
            [sys.executable, "-m", "titjudge", "view", str(root), "--port", str(port)],
            env=child_env(),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("open "):
                    break
            base = f"http://127.0.0.1:{port}"
            table = Table(["request", "titjudge s", "baseline s", "what the baseline does"])
            page, _ = get(base + "/")
            runs_s, body_runs = get(base + "/api/runs")
            n_runs = len(json.loads(body_runs)["runs"])
            first = page + runs_s
            floor_runs = baseline_runs(root)
            table.add(
                f"first page (/ and /api/runs, {n_runs} runs read and checked)",
                fmt(first, 3),
                fmt(floor_runs, 3),
                "json.load of each run's metrics.json and summary.json",
            )
            cold, body_pairs = get(base + "/api/pairs?runs=r1,r2")
            total = json.loads(body_pairs)["total"]
            first_column = json.loads(body_pairs)["columns"][0]["label"]
            table.add(
                f"first pairs page of 2 runs ({total:,} pairs; their audits read)",
                fmt(cold, 3),
                fmt(baseline_pairs(root), 3),
                "two runs' items.jsonl and pairs.csv read, every pair classified",
            )
            worst = 0.0
            for name, query in (
                ("all", "filter=all"),
                ("judges disagree", "filter=disagree"),
                ("changed between r1 and r2", "filter=changed&a=r1&b=r2"),
                ("text in rationales", "q=shared"),
                ("prompt length 230-260 words", "min_words=230&max_words=260"),
                ("page 100", "page=100"),
                (f"{first_column}'s most confident mistakes first", f"sort={first_column}"),
            ):
                samples = [get(base + f"/api/pairs?runs=r1,r2&{query}")[0] for _ in range(5)]
                median = statistics.median(samples)
                worst = max(worst, median)
                table.add(f"filter: {name} (median of 5)", fmt(median, 3), "-", "-")
            cold_items, _ = get(base + "/api/items?run=r1")
            table.add("first images page of r1 (2,600 images)", fmt(cold_items, 3), "-", "-")
            samples = [get(base + "/api/items?run=r1&q=shared&page=2")[0] for _ in range(5)]
            worst = max(worst, statistics.median(samples))
            table.add(
                "images: text filter, page 2 (median of 5)",
                fmt(statistics.median(samples), 3),
                "-",
                "-",
            )
            section.tables.append(table)
            section.headline(
                "workbench first page, 50 runs" if not quick else "workbench first page",
                f"{first:.2f} s",
                f"json.load floor {floor_runs:.2f} s; target < 1 s",
            )
            section.headline(
                "workbench slowest filter, 2 runs x 15,600 pairs",
                f"{worst * 1000:.0f} ms",
                "target < 300 ms",
            )
            section.notes.append(TARGETS)
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    return timed_section("workbench", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(harness.standalone(run, __doc__))
