"""Re-analysis without keys (issue 29): a config whose models name their key (`api_key_env`, as
every shipped API config does) re-runs from the cache with that variable unset, and so do the
ablation, `metrics`, `audit` and `titjudge.evaluate`. A key is read only when a call must
really be sent; then its absence stops the run with one line naming the variable (exit 2),
nothing sent and every cached answer kept.

The two whole-run tests use `offline_data`, 3 prompts x 4 models (12 items; the fault suite's
`fault_data` has 24): what needs a key, and what the cache answers without one, does not
grow with the benchmark, and 12 leave 6 beyond the partly cached run's 6."""

import json
from pathlib import Path

import pytest
from doubles.server import FakeOpenAIServer, build_responder
from fault_helpers import config, descriptions

import titjudge
from titjudge.cache.store import CallCache
from titjudge.cli import main

KEY = "TITJUDGE_OFFLINE_KEY"
SECRET = "sk-titjudge-offline-7c0ffee"


@pytest.fixture(scope="module")
def offline_data(synthetic) -> Path:
    """A SYNTHETIC benchmark of 3 prompts x 4 models (seed 1, as the fault suite's)."""
    return synthetic(3, 4, seed=1)


def _keyed(data: Path, url: str, tmp: Path) -> dict:
    """The fault suite's config with the describer and the LLM judge reading KEY."""
    cfg = config(data, url, tmp)
    for model in (cfg["describer"], cfg["judges"][0]):
        # under a loaded machine the suite's 1 s could fail a call before it is sent
        model.update(api_key_env=KEY, timeout=60.0)
    return cfg


def _write(tmp: Path, name: str, cfg: dict) -> str:
    path = tmp / name
    path.write_text(json.dumps(cfg))
    return str(path)


def _ablation(run: dict) -> dict:
    """One row (the run's describer) and the run's judges as columns."""
    row = {**run["describer"], "name": "vlm", "label": "VLM"}
    return {
        "name": "offline",
        "data": run["data"],
        "describers": [row],
        "comparers": run["judges"],
        "run": run["run"],
        "bootstrap": 0,
    }


def _stderr_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.mark.slow
def test_a_fully_cached_rerun_needs_no_key(offline_data, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY, SECRET)
    responder = build_responder("auto", descriptions=descriptions(offline_data))
    with FakeOpenAIServer(responder=responder, api_key=SECRET) as server:
        cfg = _keyed(offline_data, server.url, tmp_path)
        path = _write(tmp_path, "run.yaml", cfg)
        grid = _write(tmp_path, "grid.yaml", _ablation(cfg))
        assert main(["run", path, "--out", str(tmp_path / "first")]) == 0
        assert main(["ablation", grid, "--out", str(tmp_path / "grid1")]) == 0
        asked = server.stats.total
        assert server.stats.by_status.get(200) == asked > 0  # every call carried the key

        monkeypatch.delenv(KEY)
        capsys.readouterr()
        assert main(["run", path, "--out", str(tmp_path / "again")]) == 0
        assert main(["ablation", grid, "--out", str(tmp_path / "grid2")]) == 0
        outcome = titjudge.evaluate(path, out=tmp_path / "api")
        assert outcome.summary.exit_code == 0 and outcome.summary.cache.misses == 0
        scores = str(tmp_path / "again" / "scores.csv")
        pairs = str(offline_data / "pairs.csv")
        assert main(["metrics", scores, "--pairs", pairs]) == 0
        assert main(["audit", str(tmp_path / "again")]) == 0
        assert server.stats.total == asked  # nothing was sent without the key
    assert "error" not in capsys.readouterr().err
    first = tmp_path / "first"
    for again in (tmp_path / "again", tmp_path / "api"):
        for name in ("scores.csv", "metrics.json"):
            assert (again / name).read_text() == (first / name).read_text()
    table = (tmp_path / "grid1" / "table4.csv").read_text()
    assert (tmp_path / "grid2" / "table4.csv").read_text() == table


@pytest.mark.slow
def test_a_rerun_that_must_send_without_its_key_stops_with_one_line(
    offline_data, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv(KEY, SECRET)
    responder = build_responder("auto", descriptions=descriptions(offline_data))
    with FakeOpenAIServer(responder=responder, api_key=SECRET) as server:
        cfg = _keyed(offline_data, server.url, tmp_path)
        path = _write(tmp_path, "run.yaml", cfg)
        grid = _write(tmp_path, "grid.yaml", _ablation(cfg))
        assert main(["run", path, "--limit", "6", "--out", str(tmp_path / "six")]) == 0
        asked = server.stats.total
        assert asked == 12  # a description and a verdict per item
        cache = CallCache(tmp_path / "cache")
        stored = len(cache)
        cache.close()

        monkeypatch.delenv(KEY)
        capsys.readouterr()
        for command in (["run", path], ["ablation", grid]):
            assert main([*command, "--out", str(tmp_path / command[0])]) == 2
            [line] = _stderr_lines(capsys)
            assert line == (
                "titjudge: error: litellm:openai/vlm: a call is not in the cache and must be "
                f"sent, but {KEY} is not set; every answer already computed is kept in the "
                "cache: set it and run again"
            )
        assert server.stats.total == asked  # nothing was sent
        # what is cached still answers without the key
        assert main(["run", path, "--limit", "6", "--out", str(tmp_path / "six-again")]) == 0
        assert server.stats.total == asked
        cache = CallCache(tmp_path / "cache")
        assert len(cache) == stored
        cache.close()

        # with the key back, only what was missing is asked for
        monkeypatch.setenv(KEY, SECRET)
        assert main(["run", path, "--out", str(tmp_path / "all")]) == 0
        items = sum(
            1 for line in (offline_data / "manifest.jsonl").read_text().splitlines() if line
        )
        assert server.stats.total - asked == 2 * (items - 6)
    six = (tmp_path / "six" / "scores.csv").read_text()
    assert (tmp_path / "six-again" / "scores.csv").read_text() == six


@pytest.mark.parametrize("model", ["describer", "judge"])
def test_a_model_with_no_answers_is_still_refused_before_anything_is_sent(
    fault_data, tmp_path, monkeypatch, capsys, model
):
    """The preflight checks a model with no cached answers up front, as before."""
    monkeypatch.delenv(KEY, raising=False)
    with FakeOpenAIServer(api_key=SECRET) as server:
        cfg = _keyed(fault_data, server.url, tmp_path)
        if model == "judge":
            cfg["describer"].pop("api_key_env")
        assert main(["run", _write(tmp_path, "run.yaml", cfg)]) == 2
        assert server.stats.total == 0
    [line] = _stderr_lines(capsys)
    assert "preflight found" in line and f"{KEY} not set" in line
