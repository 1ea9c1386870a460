"""Benchmark 2: the full Table 4 ablation offline (several VLMs x several comparers on the
synthetic benchmark): fresh-run time, then the fully cached re-run time.

It runs `titjudge ablation configs/ablation-offline.yaml` exactly as a user would, with the
loopback VLM server of `benchmarks/ablation_offline.py serve` (three VLMs of different
quality plus an LLM judge) and the local models of `ablation_offline.py models`, both in
processes of their own. Command-line overrides point the config at this benchmark's data,
server, models and a fresh cache; rows with a local `hf:` describer are switched off (the
tiny random Qwen2.5-VL takes minutes per hundred images on CPU and its cells are empty by
design, see the config's header).

  python benchmarks/ablation_grid.py [--quick]
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    HERE,
    REPO,
    Section,
    Table,
    child_env,
    fmt,
    fresh_dir,
    run_measured,
    server_process,
    standalone,
    synthetic,
    timed_section,
)

TITLE = "2. Full Table 4 ablation, offline"
CONFIG = REPO / "configs" / "ablation-offline.yaml"
HELPER = HERE / "ablation_offline.py"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _titjudge() -> list[str]:
    found = shutil.which("titjudge")
    return [found] if found else [sys.executable, "-m", "titjudge"]


def grid_overrides(
    config: Any, data: Path, url: str, models: Path, cache: Path
) -> tuple[list[str], list[str]]:
    """`--set` overrides aiming the config at this run; returns (overrides, names of rows switched off)."""
    sets = [
        f"data.manifest={data / 'manifest.jsonl'}",
        f"data.human_pairs={data / 'pairs.csv'}",
        f"data.ranks={data / 'ranks.csv'}",
        f"run.cache_dir={cache}",
    ]
    off = []
    for row in config.describers:
        if row.model.startswith("hf:"):
            sets.append(f"describers.{row.name}.enabled=false")
            off.append(row.name)
        elif row.api_base:
            sets.append(f"describers.{row.name}.api_base={url}")
    for column in config.comparers:
        # each judge kind has its own options: a lexical comparer has no model or api_base
        if getattr(column, "api_base", None):
            sets.append(f"comparers.{column.name}.api_base={url}")
        model = getattr(column, "model", None)
        if model and model.startswith("embed:"):
            sets.append(f"comparers.{column.name}.model=embed:{models / 'embedding'}")
    return sets, off


def _grid_shape(out: Path) -> tuple[int, int, int, int]:
    """(rows run, columns, cells with a score, items per row) from the grid's ablation.json."""
    report = json.loads((out / "ablation.json").read_text())
    rows = [r for r in report["rows"] if r["status"] != "failed"]
    cells = sum(1 for r in rows for c in r["cells"].values() if c["pairwise_accuracy"] is not None)
    return len(rows), len(report["columns"]), cells, max((r["n_items"] for r in rows), default=0)


def run(quick: bool, work: Path) -> Section:
    prompts, models_per_prompt, limit = (20, 13, None) if quick else (200, 13, 650)
    method = (
        "`titjudge ablation configs/ablation-offline.yaml` in a child process, on the synthetic benchmark"
        f"{f' (first {limit:,} items: {limit // models_per_prompt} prompts x 13 models)' if limit else ''}, against "
        "the loopback server of `benchmarks/ablation_offline.py serve` (zero latency, its own process): three VLM "
        "rows x five comparers (LMM Score, Self-Eval, TIT-Score embedding with all-MiniLM-L6-v2 on CPU, "
        "TIT-Score-LLM, lexical), 1000 bootstrap resamples per cell. Baseline: the fresh run; the re-run uses the "
        "same cache and must ask the server nothing."
    )

    def body(section: Section) -> None:
        from titjudge.ablation.config import load_ablation_config

        data = synthetic(work, prompts, models_per_prompt)
        base = fresh_dir(work / "ablation")
        models = base / "models"
        subprocess.run(
            [sys.executable, str(HELPER), "models", "--out", str(models)],
            check=True,
            env=child_env(),
            cwd=REPO,
            stdout=subprocess.DEVNULL,
        )
        serve = [
            sys.executable,
            str(HELPER),
            "serve",
            "--port",
            str(_free_port()),
            "--descriptions",
            str(data / "descriptions.jsonl"),
        ]
        config = load_ablation_config(CONFIG)
        table = Table(
            [
                "run",
                "rows x columns",
                "items per row",
                "cells with a score",
                "server requests",
                "wall s",
                "CPU s (client)",
                "server CPU s",
                "peak RSS MiB",
                "exit code",
            ]
        )
        walls = []
        with server_process([], base / "server.log", command=serve) as server:
            sets, off = grid_overrides(config, data, server.url, models, base / "cache")
            command = [
                *_titjudge(),
                "ablation",
                str(CONFIG),
                "--out",
                str(base / "out"),
                *[arg for s in sets for arg in ("--set", s)],
                *(["--limit", str(limit)] if limit else []),
            ]
            for label in ("fresh run (empty cache)", "fully cached re-run"):
                fresh_dir(base / "out")  # `--out` must name a new or empty dir
                before_requests, before_cpu = server.stats()["total"], server.cpu_seconds()
                code, wall, cpu, rss = run_measured(command, base / f"{label.split()[0]}.log")
                if code not in (0, 1):
                    log = (base / f"{label.split()[0]}.log").read_text()[-3000:]
                    raise RuntimeError(f"titjudge ablation exited {code}:\n{log}")
                requests = server.stats()["total"] - before_requests
                rows, columns, cells, items = _grid_shape(base / "out")
                walls.append(wall)
                table.add(
                    label,
                    f"{rows} x {columns}",
                    f"{items:,}",
                    f"{cells} of {rows * columns}",
                    f"{requests:,}",
                    fmt(wall, 1),
                    fmt(cpu, 1),
                    fmt(server.cpu_seconds() - before_cpu, 1),
                    fmt(rss, 0),
                    code,
                )
        section.tables.append(table)
        section.headline(
            f"Table 4 grid offline ({rows} VLMs x {columns} comparers, {items:,} items per row): "
            "fresh vs cached",
            f"cached re-run {walls[1]:,.1f} s",
            f"fresh run {walls[0]:,.1f} s",
        )
        section.notes.append(
            f"cached re-run / fresh run = {walls[1] / walls[0]:.2f} "
            f"({walls[0] / walls[1]:.1f}x faster)"
        )
        if off:
            section.notes.append(
                f"rows switched off: {', '.join(off)} (local `hf:` describer, see the module doc)"
            )
        section.notes.append(
            "peak RSS and CPU are the `titjudge ablation` process's (os.wait4 rusage); the "
            "embedding model runs inside it"
        )

    return timed_section("ablation", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
