"""One model's options have one home (issue 30): roles that call one model with different
timeouts, retries or limits are refused at load naming both roles, before any request; a
describer-bound judge that names no model refuses model options its calls would never read;
every `api_base` is an http(s) URL with a host and no credentials, as a string or in a list;
fallback chains have no cycle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from doubles.server import FakeOpenAIServer

from titjudge.ablation.config import load_ablation_config
from titjudge.cli import main
from titjudge.config.load import load_config
from titjudge.errors import ConfigError

MODEL = "litellm:openai/test-model"
KEY_ENV = "TITJUDGE_ONE_HOME_KEY"


def write(tmp_path: Path, config: dict[str, Any], name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def run_config(base: str | list[str], **judge: Any) -> dict[str, Any]:
    describer = {"model": MODEL, "api_base": base, "api_key_env": KEY_ENV}
    return {
        "name": "c",
        "data": {"manifest": "m.jsonl"},
        "describer": describer,
        "judges": [{"name": "j", "kind": "llm", **judge}],
    }


def refused(tmp_path: Path, config: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, config))
    return str(err.value)


def test_conflicting_options_for_one_model_stop_the_run_with_no_request(
    tmp_path, capsys, monkeypatch
):
    """The issue's case: a judge on the describer's model with timeout 0.5, concurrency 1, rpm
    30, against a slow server. It used to run with the describer's options (all 8 judge calls at
    once, none timed out) while config.yaml recorded the judge's."""
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with FakeOpenAIServer(latency=2.0) as server:
        judge = {"model": MODEL, "api_base": server.url, "api_key_env": KEY_ENV}
        config = run_config(server.url, **judge, timeout=0.5, concurrency=1, rpm=30)
        config["run"] = {"out": str(tmp_path / "runs"), "cache_dir": str(tmp_path / "cache")}
        code = main(["run", str(write(tmp_path, config))])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1, err
        assert (
            "describer and judge j call litellm:openai/test-model with different timeout "
            "(120 and 0.5), concurrency (unset and 1), rpm (unset and 30)"
        ) in err
        assert "Traceback" not in err
        assert server.stats.total == 0
        assert not (tmp_path / "runs").exists()


def test_the_same_options_or_other_endpoints_are_not_a_conflict(tmp_path):
    same = run_config("http://127.0.0.1:9/v1", model=MODEL, api_base="http://127.0.0.1:9/v1")
    same["describer"]["rpm"] = same["judges"][0]["rpm"] = 60
    same["judges"][0]["max_image_pixels"] = 1 << 20  # differs: no limit option, no conflict
    assert load_config(write(tmp_path, same)).judges[0].rpm == 60
    other = run_config("http://127.0.0.1:9/v1", model=MODEL, api_base="http://127.0.0.1:8/v1")
    other["judges"][0]["timeout"] = 0.5  # another server: its own limits
    load_config(write(tmp_path, other))


def test_two_judges_on_one_model_are_compared_too(tmp_path):
    config = run_config("http://127.0.0.1:9/v1", model="litellm:openai/other", max_attempts=2)
    config["judges"].append({"name": "k", "kind": "llm", "model": "litellm:openai/other"})
    message = refused(tmp_path, config)
    assert "judge j and judge k" in message and "max_attempts (2 and 6)" in message


@pytest.mark.parametrize("option", [{"timeout": 0.5}, {"rpm": 30}, {"max_image_pixels": 10**6}])
def test_a_describer_bound_judge_without_a_model_refuses_model_options(tmp_path, option):
    config = run_config("http://127.0.0.1:9/v1")
    config["judges"] = [{"name": "self", "kind": "self_eval", **option}]
    message = refused(tmp_path, config)
    assert "judges.self: self_eval judge 'self' names no 'model'" in message
    assert f"set {next(iter(option))} on the describer" in message


@pytest.mark.parametrize("bad", ["htp:/nonsense", "127.0.0.1:8000/v1", "localhost:8000/v1"])
def test_a_plain_string_api_base_must_be_an_http_url_with_a_host(tmp_path, bad):
    message = refused(tmp_path, run_config(bad, model=MODEL))
    assert f"describer.api_base: api_base {bad!r} is not an http(s) URL with a host" in message


@pytest.mark.parametrize("where", ["string", "list"])
def test_credentials_in_an_api_base_are_refused_and_never_repeated(tmp_path, capsys, where):
    url = "http://user:s3cret-pw@127.0.0.1:9/v1"
    config = run_config(url if where == "string" else [url, "http://127.0.0.1:8/v1"], model=MODEL)
    config["run"] = {"out": str(tmp_path / "runs")}
    code = main(["run", str(write(tmp_path, config))])
    err = capsys.readouterr().err
    assert code == 2 and "has credentials in it" in err and "api_key_env" in err
    assert "s3cret" not in err and "user:" not in err
    assert not (tmp_path / "runs").exists()  # no config.yaml written anywhere


def test_a_fallback_cycle_is_refused_naming_it(tmp_path):
    config = run_config("http://127.0.0.1:9/v1", model=MODEL, fallback="a2")
    config["judges"][0]["name"] = "a1"
    config["judges"].append({"name": "a2", "kind": "lexical", "fallback": "a1"})
    assert "judge fallbacks form a cycle: a1 -> a2 -> a1" in refused(tmp_path, config)


def ablation(tmp_path: Path, **comparer: Any) -> dict[str, Any]:
    (tmp_path / "pairs.csv").write_text("prompt_id,item_a,item_b,winner\n")
    return {
        "name": "grid",
        "data": {"manifest": "m.jsonl", "human_pairs": str(tmp_path / "pairs.csv")},
        "describers": [{"name": "row", "model": MODEL, "api_base": "http://127.0.0.1:9/v1"}],
        "comparers": [
            {"name": "c1", "kind": "llm", "model": MODEL, "api_base": "http://127.0.0.1:9/v1"}
            | comparer,
            {"name": "lex", "kind": "lexical"},
        ],
    }


def test_ablation_rows_and_columns_on_one_model_share_its_options(tmp_path):
    with pytest.raises(
        ConfigError, match=r"row row and comparer c1 call .* tpm \(unset and 1000\)"
    ):
        load_ablation_config(write(tmp_path, ablation(tmp_path, tpm=1000)))
    grid = ablation(tmp_path, fallback="lex")
    grid["comparers"][1]["fallback"] = "c1"
    with pytest.raises(ConfigError, match="comparer fallbacks form a cycle: c1 -> lex -> c1"):
        load_ablation_config(write(tmp_path, grid))


def test_two_prices_for_one_model_are_refused(tmp_path):
    """One model is billed at one rate: a judge that gives the describer's model another
    `price` is refused (it used to share the describer's client and be billed at its rate)."""
    config = run_config(
        "http://127.0.0.1:1/v1",
        model=MODEL,
        api_base="http://127.0.0.1:1/v1",
        api_key_env=KEY_ENV,
        price={"input": 100, "output": 200},
    )
    config["describer"]["price"] = {"input": 1, "output": 2}
    message = refused(tmp_path, config)
    assert "describer and judge j call" in message and "price" in message
