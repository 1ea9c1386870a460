"""Two runs at once on one cache dir: no corruption, no call paid for twice.

The benchmark is 3 prompts x 4 models (`shared_data`, 12 items; the fault suite's
`shared_data` has 24): both runs start together and each asks for every item, so they race
on every call whatever the number of items."""

import json
import os
from pathlib import Path

import pytest
from cli_process import start_cli
from doubles.server import FakeOpenAIServer, build_responder
from fault_helpers import config, descriptions

from titjudge.cache.store import CallCache

ITEMS = 12


@pytest.fixture(scope="module")
def shared_data(synthetic) -> Path:
    """A SYNTHETIC benchmark of 3 prompts x 4 models (seed 1, as the fault suite's)."""
    return synthetic(3, 4, seed=1)


@pytest.mark.slow
def test_two_runs_share_one_cache(shared_data, tmp_path):
    responder = build_responder("auto", descriptions=descriptions(shared_data))
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
    with FakeOpenAIServer(responder=responder, latency=0.05) as server:
        procs = []
        for name in ("one", "two"):
            cfg = config(shared_data, server.url, tmp_path, concurrency=8)
            for model in (cfg["describer"], cfg["judges"][0]):
                model["timeout"] = (
                    30.0  # two cold litellm clients on two cores: no spurious timeouts
                )
            path = tmp_path / f"{name}.yaml"
            path.write_text(json.dumps(cfg))
            # two processes of their own (warm: tests/cli_process.py)
            procs.append(start_cli(["run", str(path), "--out", str(tmp_path / name)], env=env))
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
        paid = server.stats.duplicates(ok_only=True)
        total = server.stats.total
    # a description and a verdict per item, once each
    assert (total, paid) == (2 * ITEMS, 0), server.stats.snapshot(records=0)
    one = (tmp_path / "one" / "scores.csv").read_text()
    assert one == (tmp_path / "two" / "scores.csv").read_text()
    cache = CallCache(tmp_path / "cache")
    assert cache.entries() == 2 * ITEMS
