"""The preflight's per-model checks: litellm provider and credentials exactly as the backend
reads them, local checkpoints and libraries, replay files; one line naming every problem."""

from __future__ import annotations

import json

import pytest

from titjudge.errors import ConfigError
from titjudge.models.core.options import ModelOptions
from titjudge.models.preflight import ModelUse, check_models, model_problems
from titjudge.models.registry import build_text_backend
from titjudge.records.spec import parse_model_spec

SECRET = "AIzaSy-preflight-secret-0123456789"
KEYS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "TITJUDGE_TEST_KEY")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


def problems(model: str, **options) -> list[str]:
    return model_problems(parse_model_spec(model), ModelOptions(**options))


def test_unknown_litellm_provider_is_named_with_a_hint():
    assert problems("litellm:nosuchprovider/x") == ["unknown litellm provider 'nosuchprovider'"]
    assert problems("litellm:gemnii/gemini-2.5-pro") == [
        "unknown litellm provider 'gemnii' (did you mean 'gemini'?)"
    ]
    assert "write it as 'provider/model'" in problems("litellm:my-model")[0]


def test_missing_provider_key_names_every_variable_litellm_reads():
    assert problems("litellm:gemini/gemini-2.5-pro") == ["GOOGLE_API_KEY or GEMINI_API_KEY not set"]
    assert problems("litellm:openai/gpt-4o") == ["OPENAI_API_KEY not set"]


def test_keys_in_the_environment_pass(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert problems("litellm:gemini/gemini-2.5-pro") == []
    assert problems("litellm:gpt-4o") == []  # litellm's own default provider, openai


def test_api_key_env_is_the_variable_read(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # not the one named: still missing
    assert problems("litellm:openai/gpt-4o", api_key_env="TITJUDGE_TEST_KEY") == [
        "TITJUDGE_TEST_KEY not set"
    ]
    monkeypatch.setenv("TITJUDGE_TEST_KEY", "")  # empty is not a key (the backend reads it so)
    assert problems("litellm:openai/gpt-4o", api_key_env="TITJUDGE_TEST_KEY") != []
    monkeypatch.setenv("TITJUDGE_TEST_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert problems("litellm:openai/gpt-4o", api_key_env="TITJUDGE_TEST_KEY") == []


def test_local_server_without_key_passes_where_the_call_would_work():
    """hosted_vllm sends no key of its own (litellm's hosted_vllm provider), so a local vLLM
    server needs none; the openai provider refuses to send a request without one ("Missing
    credentials" from the OpenAI client), so there an api_base does not stand in for a key."""
    assert problems("litellm:hosted_vllm/Qwen/Qwen3-8B", api_base="http://127.0.0.1:9/v1") == []
    assert problems("litellm:openai/local-model", api_base="http://127.0.0.1:9/v1") == [
        "OPENAI_API_KEY not set"
    ]


def test_local_checkpoints(tmp_path, monkeypatch):
    assert problems(f"hf:{tmp_path / 'gone'}") == [f"no model folder at {tmp_path / 'gone'}"]
    (tmp_path / "empty").mkdir()
    assert "has no config.json" in problems(f"embed:{tmp_path / 'empty'}")[0]
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "config.json").write_text("{}")
    assert problems(f"hf:{tmp_path / 'ok'}") == []


def test_hub_id_offline_must_be_in_the_cache(tmp_path, monkeypatch):
    """A hub id is looked up in the Hugging Face cache's own layout (models--org--name/refs/main
    -> snapshots/<commit>/config.json), never fetched."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert problems("hf:org/not-cached") == [
        "not in the Hugging Face cache, and downloads are off (HF_HUB_OFFLINE)"
    ]
    repo = tmp_path / "models--org--cached"
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123" / "config.json").write_text(json.dumps({}))
    assert problems("embed:org/cached") == []
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # online, an uncached id is downloaded as today
    assert problems("hf:org/not-cached") == []


def test_missing_local_libraries_name_the_install_line(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    (tmp_path / "config.json").write_text("{}")
    (found,) = problems(f"hf:{tmp_path}")
    assert found.startswith("torch not installed (pip install -e '") and "[local]'" in found


def test_replay_file(tmp_path):
    assert problems(f"replay:{tmp_path / 'd.jsonl'}") == [
        f"replay descriptions file {tmp_path / 'd.jsonl'} not found"
    ]
    (tmp_path / "d.jsonl").write_text("")
    assert problems(f"replay:{tmp_path / 'd.jsonl'}") == []


def test_one_line_groups_users_and_never_prints_a_key(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    gemini = ModelOptions()
    named = ModelOptions(api_key_env="TITJUDGE_TEST_KEY")
    uses = [
        ModelUse("litellm:openai/gpt-4o", ModelOptions(), "describer"),
        ModelUse("litellm:gemini/gemini-2.5-pro", gemini, "judge tit_llm_g"),
        ModelUse("litellm:openai/gpt-4o", ModelOptions(), "judge self_eval"),
        ModelUse("litellm:openai/gpt-4o", ModelOptions(), "judge lmm"),
        ModelUse("litellm:gemini/gemini-2.5-pro", named, "judge strict"),
        ModelUse("litellm:nosuchprovider/x", ModelOptions(), "judge j2"),
        ModelUse(f"hf:{tmp_path / 'gone'}", ModelOptions(), "judge local"),
    ]
    with pytest.raises(ConfigError) as err:
        check_models(uses, "c.yaml")
    message = str(err.value)
    assert message == (
        "c.yaml: preflight found 4 problems, nothing was called: "
        "OPENAI_API_KEY not set (litellm:openai/gpt-4o: describer, judges self_eval, lmm); "
        "TITJUDGE_TEST_KEY not set (litellm:gemini/gemini-2.5-pro: judge strict); "
        "unknown litellm provider 'nosuchprovider' (litellm:nosuchprovider/x: judge j2); "
        f"no model folder at {tmp_path / 'gone'} (hf:{tmp_path / 'gone'}: judge local)"
    )
    assert SECRET not in message and "\n" not in message


def test_nothing_missing_raises_nothing(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    check_models([ModelUse("litellm:openai/gpt-4o", ModelOptions(), "describer")], "c.yaml")


def test_backend_refuses_an_unknown_provider_when_built():
    """The library path (`titjudge.evaluate`), which skips the preflight, still refuses before
    the first item rather than failing every item at call time."""
    with pytest.raises(ConfigError, match="unknown litellm provider 'nosuchprovider'"):
        build_text_backend("litellm:nosuchprovider/x", ModelOptions())
