"""A judge may not take a name metrics.json keeps for itself (its top-level keys beside the
variants): such a config is refused when it is loaded, in one line, before any model is asked.
Before, every call was paid and the metrics then raised. A config's own name, which names
the folder its runs are kept in, may not be '.' or '..'."""

import json
from pathlib import Path

import pytest
from doubles.server import FakeOpenAIServer, build_responder

import titjudge
from titjudge.cli import main
from titjudge.data.records import HumanPair, Item, ScoreRow
from titjudge.data.synth.benchmark import synthesize
from titjudge.errors import ConfigError
from titjudge.metrics.summary import evaluate

RESERVED = ("notes", "settings", "leaderboard", "thresholds", "comparisons")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reserved") / "data"
    synthesize(out, n_prompts=2, n_models=2, seed=3)
    return out


def _config(data: Path, url: str, tmp: Path, judge: str, name: str = "reserved") -> dict:
    api = {"api_base": url, "backoff_initial": 0.01, "max_attempts": 2}
    return {
        "name": name,
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": "litellm:openai/vlm", **api},
        "judges": [
            {"name": judge, "kind": "llm", "model": "litellm:openai/judge", **api},
            {"name": "lexical", "kind": "lexical"},
        ],
        "run": {"cache_dir": str(tmp / "cache"), "out": str(tmp / "runs")},
    }


@pytest.mark.parametrize("name", RESERVED)
def test_a_judge_with_a_reserved_name_is_refused_before_any_request(
    name, data, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeOpenAIServer(responder=build_responder("auto", descriptions={})) as server:
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps(_config(data, server.url, tmp_path, name)))
        code = main(["run", str(path)])
        assert server.stats.total == 0
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert f"judge name {name!r} is reserved" in line and "rename the judge" in line
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


def test_the_python_api_and_set_refuse_them_too(data, tmp_path):
    config = _config(data, "http://127.0.0.1:9/v1", tmp_path, "tit_llm")
    with pytest.raises(ConfigError, match="judge name 'settings' is reserved"):
        titjudge.evaluate(config, overrides=["judges.tit_llm.name=settings"])
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="judge name 'notes' is reserved"):
        titjudge.load_config(path, ["judges.lexical.name=notes"])


@pytest.mark.parametrize("name", [".", ".."])
def test_a_config_name_that_is_no_folder_is_refused(name, data, tmp_path):
    with pytest.raises(ConfigError, match="cannot name a folder of runs"):
        titjudge.load_config(_write(tmp_path, _config(data, "http://x/v1", tmp_path, "j", name)))


def _write(tmp: Path, config: dict) -> Path:
    path = tmp / "c.json"
    path.write_text(json.dumps(config))
    return path


def test_the_reserved_names_are_exactly_the_metrics_top_level_keys(tmp_path):
    """Computed, not listed: whatever metrics.json holds beside the variants is reserved."""
    from titjudge.judges.options import RESERVED_NAMES

    items = [Item(f"i{k}", "p", "prompt", tmp_path / f"{k}.png", f"m{k}") for k in range(3)]
    rows = [
        ScoreRow(item.item_id, variant, float(k + offset), "ok")
        for k, item in enumerate(items)
        for variant, offset in (("a", 0), ("b", 1))
    ]
    pairs = [HumanPair("p", "i0", "i1", "b"), HumanPair("p", "i1", "i2", "b")]
    summary = evaluate(rows, pairs, [], items, bootstrap=0)
    # format 2 keeps the variants under their own key; the run-level keys beside them are the
    # reserved names (format 1 put the variants among them), plus the format's own two
    assert set(summary["variants"]) == {"a", "b"}
    assert set(summary) - {"version", "variants"} == set(RESERVED_NAMES) == set(RESERVED)
