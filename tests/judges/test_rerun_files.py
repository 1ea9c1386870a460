"""A second run under the same name with fewer judges and no human pairs holds only its own
files: before, the first run's metrics.json (numbers for judges no longer in the run) and
pairs_<judge>.jsonl stayed beside the new scores.csv. Each run has its own dir now."""

import pytest
from doubles.server import FakeOpenAIServer
from judge_helpers import ModesResponder, run_config

import titjudge

# every test makes whole runs through the loopback server or reads one
pytestmark = pytest.mark.slow

JUDGES = [
    {"name": "pair", "kind": "pairwise", "model": "litellm:openai/judge"},
    {"name": "lexical", "kind": "lexical"},
]


def test_a_smaller_rerun_has_only_its_own_files(synth_data, tmp_path):
    with FakeOpenAIServer(responder=ModesResponder(synth_data)) as server:
        config = run_config(synth_data, server.url, tmp_path, JUDGES)
        first = titjudge.evaluate(config)
        config["judges"] = [{"name": "lexical", "kind": "lexical"}]
        config["data"].pop("human_pairs")
        second = titjudge.evaluate(config)
    assert first.run_dir.parent == second.run_dir.parent == tmp_path / "runs" / "modes"
    assert first.run_dir != second.run_dir
    assert sorted(p.name for p in first.run_dir.iterdir()) == [
        "config.yaml",
        "files.json",
        "items.jsonl",
        "metrics.json",
        "pairs_pair.jsonl",
        "scores.csv",
        "summary.json",
    ]
    assert sorted(p.name for p in second.run_dir.iterdir()) == [
        "config.yaml",
        "files.json",
        "items.jsonl",
        "scores.csv",
        "summary.json",
    ]
    for run in (first, second):  # files.json lists every other file, and only the run's own
        assert run.files is not None
        assert set(run.files.files) == {p.name for p in run.run_dir.iterdir()} - {"files.json"}
    assert {
        line.split(",")[1] for line in (second.run_dir / "scores.csv").read_text().splitlines()[1:]
    } == {"lexical"}
    assert titjudge.find_run(tmp_path / "runs" / "modes") == second.run_dir
