"""What `titjudge demo` and `titjudge run` print: brackets kept, commands on one line each,
the synthetic-data warning, and per-model means when a run has no human pairs."""

from __future__ import annotations

import json
import shlex
import statistics
from pathlib import Path

import builders
import pytest

import titjudge.cli.demo as run_cli
from titjudge.cli import main
from titjudge.config.load import dump_config, validate_config
from titjudge.config.schema import RunConfig
from titjudge.metrics.model_means import model_means
from titjudge.records.items import ScoreRow


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")


@pytest.mark.slow
def test_demo_prints_whole_commands_and_the_synthetic_warning(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    narrow: None,
) -> None:
    monkeypatch.setattr(run_cli, "minilm_dir", lambda: None)  # MiniLM not installed
    monkeypatch.chdir(tmp_path)  # no estimate reads the checkout's cache
    out = tmp_path / "a long folder name for the demo output" / "titjudge-demo"
    assert main(["demo", "--out", str(out), "--prompts", "3", "--models", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # the install hint keeps its extras and is one copyable line
    hint = [line for line in lines if "pip install -e" in line]
    assert len(hint) == 1 and hint[0].strip().endswith("[local,demo]'"), hint
    data = out / "synthetic-data"
    commands = [
        line.strip()
        for line in lines
        if line.lstrip().startswith(("titjudge run ", "titjudge est"))
    ]
    # each a shell command as it can be pasted: a path with spaces is quoted
    assert [shlex.split(c) for c in commands] == [
        ["titjudge", "run", str(out / "demo.yaml")],
        ["titjudge", "estimate", str(out / "tit-llm-gemini.yaml"), *sets(data)],
        ["titjudge", "run", str(out / "tit-llm-gemini.yaml"), *sets(data), "--limit", "8"],
    ]
    assert "  export GEMINI_API_KEY=..." in lines
    text = " ".join(" ".join(lines).split())
    assert "these numbers test the plumbing only" in text
    assert "predict nothing about the paper's models or their ranking" in text


def sets(data: Path) -> list[str]:
    manifest, pairs = data / "manifest.jsonl", data / "pairs.csv"
    return ["--set", f"data.manifest={manifest}", "--set", f"data.human_pairs={pairs}"]


def test_model_means_count_only_ok_rows_and_share_ranks_on_ties() -> None:
    rows = [
        ScoreRow("a1", "v", 0.75, "ok"),
        ScoreRow("a2", "v", 0.25, "ok"),
        ScoreRow("a3", "v", 99.0, "fallback"),  # another judge's scale: left out
        ScoreRow("b1", "v", 0.5, "ok"),
        ScoreRow("b2", "v", None, "failed"),
        ScoreRow("c1", "v", 0.2, "ok"),
    ]
    models = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "c1": "C"}
    found = model_means(rows, models)["v"]
    assert [(r["model"], r["rank"], r["n"]) for r in found["ranking"]] == [
        ("A", 1, 2),
        ("B", 1, 1),
        ("C", 3, 1),
    ]
    assert found["ranking"][0]["mean"] == 0.5
    assert (found["n_failed_left_out"], found["n_fallback_left_out"]) == (1, 1)


@pytest.mark.slow
def test_a_run_without_human_pairs_ranks_models_by_mean_score(
    synthetic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builders.copy_data(synthetic(4, 3, seed=1), tmp_path)
    raw = run_cli.demo_config(tmp_path / "data", tmp_path, None)
    del raw["data"]["human_pairs"], raw["data"]["ranks"]
    config_path = tmp_path / "nopairs.yaml"
    config_path.write_text(dump_config(validate_config(raw, RunConfig, "test config")))
    assert main(["run", str(config_path), "--out", str(tmp_path / "run")]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert not (tmp_path / "run" / "metrics.json").exists()
    # the means worked out from the run's own files
    models = {
        json.loads(line)["item_id"]: json.loads(line)["t2i_model"]
        for line in (tmp_path / "data" / "manifest.jsonl").read_text().splitlines()
    }
    scores: dict[str, list[float]] = {}
    for line in (tmp_path / "run" / "scores.csv").read_text().splitlines()[1:]:
        item_id, variant, score, status = line.split(",")
        assert variant == "lexical" and status == "ok"
        scores.setdefault(models[item_id], []).append(float(score))
    means = {model: statistics.fmean(values) for model, values in scores.items()}
    ranking = summary["model_means"]["lexical"]["ranking"]
    assert [r["model"] for r in ranking] == sorted(means, key=lambda m: -means[m])
    assert {r["model"]: r["mean"] for r in ranking} == pytest.approx(means)
    assert "lexical: models by mean score" in printed
    for r in ranking:
        assert r["model"] in printed and f"{r['mean']:.4g}" in printed
