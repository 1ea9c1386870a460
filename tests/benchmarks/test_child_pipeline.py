"""The benchmarks' measured child (benchmarks/child_pipeline.py, which api_throughput.py and
long_tail.py start once per run) runs a real config and reports what the run's record says.
It once crashed on every run for sessions (it read counts the run outcome no longer had and
could not serialise the typed summary) without a test noticing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from titjudge.cli.demo import demo_config
from titjudge.data.synth.benchmark import synthesize

CHILD = Path(__file__).resolve().parents[2] / "benchmarks" / "child_pipeline.py"


@pytest.mark.slow
def test_the_child_reports_the_runs_counts_and_the_evaluators_time(tmp_path: Path) -> None:
    synthesize(tmp_path / "data", n_prompts=3, n_models=3, seed=0)
    config = demo_config(tmp_path / "data", tmp_path, None)
    (tmp_path / "config.json").write_text(json.dumps(config, default=str))
    done = subprocess.run(
        [sys.executable, str(CHILD), "titjudge", str(tmp_path / "config.json")]
        + ["--out", str(tmp_path / "run"), "--time-eval"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert report["summary"] == written
    assert (report["n_items"], report["failed_items"]) == (9, 0)
    assert report["status"] == {"lexical": {"ok": 9, "fallback": 0, "failed": 0}}
    assert report["evaluate_seconds"] >= 0 and report["peak_rss_mib"] > 0
