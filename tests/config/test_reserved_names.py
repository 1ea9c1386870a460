"""A judge may not take a name metrics.json keeps for itself (its top-level keys beside the
variants): such a config is refused when it is loaded, in one line, before any model is asked.
Before, every call was paid and the metrics then raised. A config's own name, which names
the folder its runs are kept in, may not be '.' or '..'."""

from pathlib import Path

import pytest
from builders import lexical, llm_judge, run_config, write_config
from doubles.server import FakeOpenAIServer, build_responder

import titjudge
from titjudge.cli import main
from titjudge.errors import ConfigError
from titjudge.metrics.summary import MetricSettings
from titjudge.metrics.summary import metrics_record as evaluate
from titjudge.records.items import HumanPair, Item, ScoreRow

RESERVED = ("notes", "settings", "leaderboard", "thresholds", "comparisons")


@pytest.fixture(scope="module")
def data(synth_data) -> Path:
    """Any benchmark: every config here is refused before it is read."""
    return synth_data


def _config(data: Path, url: str, tmp: Path, judge: str, name: str = "reserved") -> dict:
    """The loopback describer, an LLM judge named `judge` and the lexical judge."""
    judges = [llm_judge(url, judge, max_attempts=2), lexical()]
    return run_config(
        data, tmp, url=url, name=name, judges=judges, max_attempts=2, concurrency=None
    )


@pytest.mark.parametrize("name", RESERVED)
def test_a_judge_with_a_reserved_name_is_refused_before_any_request(
    name, data, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeOpenAIServer(responder=build_responder("auto", descriptions={})) as server:
        path = write_config(_config(data, server.url, tmp_path, name), tmp_path)
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
    path = write_config(config, tmp_path, "c.json")
    with pytest.raises(ConfigError, match="judge name 'notes' is reserved"):
        titjudge.load_config(path, ["judges.lexical.name=notes"])


@pytest.mark.parametrize("name", [".", ".."])
def test_a_config_name_that_is_no_folder_is_refused(name, data, tmp_path):
    with pytest.raises(ConfigError, match="cannot name a folder of runs"):
        config = _config(data, "http://x/v1", tmp_path, "j", name)
        titjudge.load_config(write_config(config, tmp_path, "c.json"))


def test_the_reserved_names_are_exactly_the_metrics_top_level_keys(tmp_path):
    """Computed, not listed: whatever metrics.json holds beside the variants is reserved."""
    from titjudge.records.names import RESERVED_NAMES

    items = [Item(f"i{k}", "p", "prompt", tmp_path / f"{k}.png", f"m{k}") for k in range(3)]
    rows = [
        ScoreRow(item.item_id, variant, float(k + offset), "ok")
        for k, item in enumerate(items)
        for variant, offset in (("a", 0), ("b", 1))
    ]
    pairs = [HumanPair("p", "i0", "i1", "b"), HumanPair("p", "i1", "i2", "b")]
    summary = evaluate(rows, pairs, [], items, settings=MetricSettings(bootstrap=0)).metrics_json()
    # format 2 keeps the variants under their own key; the run-level keys beside them are the
    # reserved names (format 1 put the variants among them), plus the format's own two
    assert set(summary["variants"]) == {"a", "b"}
    assert set(summary) - {"version", "variants"} == set(RESERVED_NAMES) == set(RESERVED)
