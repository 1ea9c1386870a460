"""The preflight knows the provider (issue 30): the client packages litellm needs for it are
checked at config load with the pip line to install them (Vertex AI without google-auth used
to fail every call with `No module named 'google.auth'`, retried as transient, ~40 s an item);
a missing key is found without importing litellm; and the data files and templates are named
in the same one line as the keys (a missing manifest used to surface only once keys were set).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import builders
import pytest
import yaml
from doubles.server import FakeOpenAIServer

from titjudge.cli import main
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.providers import CREDENTIALS, listed_problems
from titjudge.models.preflight import model_problems
from titjudge.records.spec import parse_model_spec

#: every variable the provider table names, unset in each test
TABLE_VARS = sorted(
    {name for needs in CREDENTIALS.values() if needs for opt in needs.any_of for name in opt}
)


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch):
    for name in [*TABLE_VARS, "TITJUDGE_PREFLIGHT_KEY"]:
        monkeypatch.delenv(name, raising=False)


def without(monkeypatch, *modules: str) -> None:
    """As if `modules` were not installed (whatever this environment has)."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in modules else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def with_installed(monkeypatch, *modules: str) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return real("json") if name in modules else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def problems(model: str, **options: Any) -> list[str]:
    return model_problems(parse_model_spec(model), ModelOptions(**options))


def test_vertex_without_google_auth_names_the_pip_line(monkeypatch):
    without(monkeypatch, "google.auth")
    monkeypatch.setenv("VERTEXAI_PROJECT", "p")
    monkeypatch.setenv("VERTEXAI_LOCATION", "us-central1")
    assert problems("litellm:vertex_ai/gemini-2.0-flash") == [
        "google.auth not installed, which litellm needs for vertex_ai (pip install google-auth)"
    ]
    with_installed(monkeypatch, "google.auth", "requests")
    assert problems("litellm:vertex_ai/gemini-2.0-flash") == []


def test_bedrock_without_boto3_names_the_pip_line(monkeypatch):
    without(monkeypatch, "boto3", "botocore")
    (found, key) = problems("litellm:bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0")
    assert found == (
        "boto3 and botocore not installed, which litellm needs for bedrock "
        "(pip install boto3 botocore)"
    )
    assert key == "AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY not set"


def test_litellm_path_checks_packages_too(monkeypatch):
    """A model the table cannot place (custom_llm_provider it does not list) is asked of
    litellm, which names the provider; its packages are checked there as well."""
    from titjudge.models.litellm.backend import setup_problems

    without(monkeypatch, "google.auth")
    found = setup_problems(parse_model_spec("litellm:vertex_ai/gemini-2.0-flash"), None, None)
    assert found[0].endswith("(pip install google-auth)")


@pytest.mark.parametrize("provider", sorted(CREDENTIALS))
@pytest.mark.parametrize("api_base", [None, "http://127.0.0.1:9/v1"])
@pytest.mark.parametrize("env", ["none", "all"])
def test_the_table_says_what_litellm_says(monkeypatch, provider, api_base, env):
    """The table's answer is the one the litellm path gives (`backend.setup_problems`, which
    asks litellm's provider lookup and validate_environment), with nothing set and with
    every variable set."""
    from titjudge.models.litellm.backend import setup_problems

    with_installed(monkeypatch, "google.auth", "requests", "boto3", "botocore")
    if env == "all":
        for name in TABLE_VARS:
            monkeypatch.setenv(name, "x")
    spec = parse_model_spec(f"litellm:{provider}/some-model")
    fast = listed_problems(spec, api_base, None, None)
    assert fast is not None
    assert fast == setup_problems(spec, api_base, None, None)


CHILD = """
import sys, time
started = time.perf_counter()
from titjudge.cli import main
code = main(sys.argv[1:])
print("RESULT", code, "litellm" in sys.modules, round(time.perf_counter() - started, 3))
"""


def write_config(tmp_path: Path, **describer: Any) -> Path:
    """A config whose manifest and pairs file are gone, a Gemini describer and an LLM judge with
    a misspelt prompt name: `builders.run_config`, written as tmp_path/c.yaml."""
    judge = {
        "name": "j",
        "kind": "llm",
        "model": "litellm:openai/gpt-4o",
        "prompt": "judge_simlarity",
    }
    config = builders.run_config(
        tmp_path,
        tmp_path,
        name="c",
        describer={"model": "litellm:gemini/gemini-2.0-flash", **describer},
        judges=[judge],
        concurrency=None,
    )
    config["data"] = {
        "manifest": str(tmp_path / "gone.jsonl"),
        "human_pairs": str(tmp_path / "p.csv"),
    }
    return builders.write_config(config, tmp_path, "c.yaml")


@pytest.mark.slow
def test_missing_keys_data_and_templates_in_one_line_without_importing_litellm(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in TABLE_VARS}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "run", str(write_config(tmp_path))],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    result = done.stdout.split("RESULT")[-1].split()
    assert result[:2] == ["2", "False"], done.stderr  # exit 2, litellm never imported
    (line,) = done.stderr.strip().splitlines()
    assert "preflight found 5 problems, nothing was called: " in line
    for part in (
        f"{tmp_path / 'gone.jsonl'}: manifest not found (data.manifest)",
        f"{tmp_path / 'p.csv'}: pairs file not found (data.human_pairs)",
        "unknown prompt template 'judge_simlarity' (did you mean 'judge_similarity'?)",
        "(judges.j.prompt)",
        "GOOGLE_API_KEY or GEMINI_API_KEY not set (litellm:gemini/gemini-2.0-flash: describer)",
        "OPENAI_API_KEY not set (litellm:openai/gpt-4o: judge j)",
    ):
        assert part in line
    assert not (tmp_path / "runs").exists()


def test_vertex_on_a_plain_install_stops_before_any_request(tmp_path, capsys, monkeypatch):
    without(monkeypatch, "google.auth")
    monkeypatch.setenv("VERTEXAI_PROJECT", "p")
    monkeypatch.setenv("VERTEXAI_LOCATION", "us-central1")
    with FakeOpenAIServer() as server:
        path = write_config(tmp_path, api_base=server.url)
        config = yaml.safe_load(path.read_text())
        config["describer"]["model"] = "litellm:vertex_ai/gemini-2.0-flash"
        config["judges"] = []
        path.write_text(json.dumps(config))
        assert main(["run", str(path)]) == 2
        assert server.stats.total == 0
    err = capsys.readouterr().err
    assert "(pip install google-auth)" in err and "litellm:vertex_ai/gemini-2.0-flash" in err
