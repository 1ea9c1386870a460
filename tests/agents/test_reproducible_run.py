"""One truth per run: the same config gives the same scores.csv, metrics.json and items.jsonl
(apart from timing fields) whatever the process's hash seed, and whether it is computed fresh
or answered entirely from the cache.

One fresh run is a `titjudge run` process hashing strings otherwise than this process
(checked): a warm child (tests/cli_process.py), whose forkserver drew its own hash seed, or a
fresh interpreter under another PYTHONHASHSEED where the session fixed one; the other fresh
run and the cached run are in-process (the CLI's main) under the test session's hash seed. So any order taken from a set or a str-keyed hash (a
rationale's word list, say) shows up as a difference. The config is the
demo's (`cli.demo.demo_config`): replayed descriptions of a small synthetic benchmark, the
lexical judge and, when the `demo` extra is installed, all-MiniLM-L6-v2. The benchmark has 6
prompts x 4 models (it had 10): several prompts' rankings and pairs, at ~3 s less CPU for each
fresh run.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_cli

from titjudge.cli import main
from titjudge.cli.demo import demo_config, minilm_dir

PROMPTS, MODELS = 6, 4
#: fields that say how long a call took or whether the cache answered it, not what it answered
TIMING = frozenset({"latency", "cached"})


def without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def run(config: Path, out: Path, hash_seed: int) -> None:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "titjudge", "run", str(config), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def record_hash(path: Path) -> None:
    """Run in the warm child before its run: how it hashes a str."""
    path.write_text(str(hash("titjudge")))


def other_hash_seed() -> int:
    """A PYTHONHASHSEED whose str hashes differ from this process's (checked, not assumed)."""
    for seed in (1, 2):
        probe = subprocess.run(
            [sys.executable, "-c", "print(hash('titjudge'))"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            check=True,
        )
        if int(probe.stdout) != hash("titjudge"):
            return seed
    raise AssertionError("seeds 1 and 2 both hash as this process does")


def outputs(out: Path) -> dict[str, Any]:
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    return {
        "scores.csv": (out / "scores.csv").read_text(),
        "metrics.json": without_timing(json.loads((out / "metrics.json").read_text())),
        "items.jsonl": without_timing(items),
    }


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["scores.csv"] == b["scores.csv"]
    assert a["metrics.json"] == b["metrics.json"]
    assert len(a["items.jsonl"]) == len(b["items.jsonl"])
    for left, right in zip(a["items.jsonl"], b["items.jsonl"], strict=True):
        assert left == right, (left["item_id"], left["variant"])


@pytest.mark.slow
def test_the_same_run_writes_the_same_files_whatever_the_hash_seed_fresh_or_cached(
    synthetic, tmp_path, capsys
):
    data = synthetic(PROMPTS, MODELS)
    config = tmp_path / "run.yaml"
    first_cache, second_cache = tmp_path / "first", tmp_path / "second"
    # JSON is YAML; each fresh run gets a cache of its own
    raw = demo_config(data, first_cache, minilm_dir())
    config.write_text(json.dumps(raw))
    other = tmp_path / "other.yaml"
    other.write_text(json.dumps(demo_config(data, second_cache, minilm_dir())))

    # the first fresh run is a warm child's (its forkserver's hash seed), or, where that seed is
    # this process's (PYTHONHASHSEED set for the session), a fresh interpreter's under another
    probe = tmp_path / "child-hash"
    done = run_cli(
        ["run", str(config), "--out", str(tmp_path / "fresh-1")],
        env={"HF_HUB_OFFLINE": "1"},
        before=functools.partial(record_hash, probe),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    if int(probe.read_text()) == hash("titjudge"):
        shutil.rmtree(tmp_path / "fresh-1")
        shutil.rmtree(first_cache)
        run(config, tmp_path / "fresh-1", hash_seed=other_hash_seed())
    # the second fresh run is this process's, under its own hash seed
    code = main(["run", str(other), "--out", str(tmp_path / "fresh-2")])
    assert code == 0, capsys.readouterr().err[-3000:]
    # every judge call is in first's cache
    code = main(["run", str(config), "--out", str(tmp_path / "cached-3")])
    assert code == 0, capsys.readouterr().err[-3000:]

    fresh = outputs(tmp_path / "fresh-1")
    assert len(fresh["items.jsonl"]) == PROMPTS * MODELS * len(raw["judges"])
    assert all(line["status"] == "ok" for line in fresh["items.jsonl"])
    assert_same(fresh, outputs(tmp_path / "fresh-2"))
    summary = json.loads((tmp_path / "cached-3" / "summary.json").read_text())
    judge = summary["usage"].get("judge", {"calls": 0, "cache_hits": 0})
    assert judge["cache_hits"] == judge["calls"]  # nothing was computed again
    assert_same(fresh, outputs(tmp_path / "cached-3"))
