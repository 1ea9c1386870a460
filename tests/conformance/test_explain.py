"""`titjudge explain CONFIG`: per model and role, the exact request for the first item, as
litellm would send it, with keys redacted and images summarized, sending nothing (the stand-in
counts no request; issue 24), after the run's own preflight: what `run` refuses, a key not
set included, explain refuses in the same line (issue 48; tests/cli/test_preflight_commands.py
has every kind)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from titjudge.cli import main

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-explain-secret-0123456789abcdef"


@pytest.fixture(scope="module")
def data(synthetic) -> Path:
    return synthetic(1, 2, seed=5)


def _explain(config: str, data: Path, *sets: str) -> int:
    args = [
        "explain",
        str(REPO / "configs" / config),
        "--set",
        f"data.manifest={data / 'manifest.jsonl'}",
        "--set",
        f"data.human_pairs={data / 'pairs.csv'}",
    ]
    for value in sets:
        args += ["--set", value]
    return main(args)


def _bodies(out: str) -> list[dict]:
    """The JSON bodies printed, in order."""
    found, decoder, at = [], json.JSONDecoder(), 0
    while (start := out.find("\n{", at)) != -1:
        body, end = decoder.raw_decode(out, start + 1)
        found.append(body)
        at = end
    return found


def test_gpt5_requests_are_printed_and_nothing_sent(provider_server, data, monkeypatch, capsys):
    base = provider_server.openai_base
    sets = (f"describer.api_base={base}", f"judges.tit_llm_gpt5.api_base={base}")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert _explain("tit-llm-gpt5.yaml", data, *sets) == 2  # as `run` refuses it
    assert "OPENAI_API_KEY not set (litellm:openai/gpt-5" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    code = _explain("tit-llm-gpt5.yaml", data, *sets)
    out = capsys.readouterr().out
    assert code == 0
    assert provider_server.requests == []
    assert out.count(f"POST {base}/chat/completions") == 2
    assert SECRET not in out and "<redacted>" in out
    describer, judge = _bodies(out)
    assert describer["reasoning_effort"] == "minimal"
    assert describer["max_completion_tokens"] == 512 + 25_000
    assert "temperature" not in describer and "max_tokens" not in describer
    image = describer["messages"][0]["content"][0]["image_url"]["url"]
    assert re.fullmatch(r"<image/png 256x256, \d+ KB>", image), image
    assert "base64" not in out
    assert judge["reasoning_effort"] == "low" and "temperature" not in judge
    assert judge["max_completion_tokens"] == 1024 + 25_000
    assert judge["response_format"]["json_schema"]["strict"] is True
    assert "known only once the describer answers" in judge["messages"][-1]["content"]
    assert "== judge lexical (lexical)" in out


def test_a_set_key_never_appears(provider_server, data, monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    code = _explain(
        "tit-llm-gemini3-pro.yaml", data, f"describer.api_base={provider_server.gemini_base}"
    )
    out = capsys.readouterr().out
    assert code == 0 and provider_server.requests == []
    assert SECRET not in out and "x-goog-api-key: <redacted>" in out
    assert "note:" not in out.split("== judge")[0]  # the describer's key is set
    describer = _bodies(out)[0]
    config = describer["generationConfig"]
    assert config["thinkingConfig"]["thinkingLevel"] == "low"
    assert config["max_output_tokens"] == 512 + 32_768
    assert "temperature" not in config
    inline = describer["contents"][0]["parts"][0]["inline_data"]["data"]
    assert inline.startswith("<image/png 256x256")


def test_a_config_error_is_one_line_and_exit_2(provider_server, data, capsys):
    code = _explain("tit-llm-gpt5.yaml", data, "judges.tit_llm_gpt5.temperature=0.3")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "temperature 0.3 is refused" in err[0]
    assert provider_server.requests == []


def test_every_judge_kind_that_asks_a_model_is_explained(
    provider_server, data, tmp_path, capsys, monkeypatch
):
    """The run's own steps build what explain prints: the describer, an llm verdict, a
    checklist's decomposition and its verdict request (over a stand-in element list), a
    pairwise verdict (the first pair of the first prompt), an lmm_yes question and a served
    embedding, each once; the lexical judge asks no model."""
    import yaml

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # the preflight's, as the run's

    base = provider_server.openai_base
    model = {"model": "litellm:openai/judge-model", "api_base": base}
    config = {
        "name": "every-kind",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": "litellm:openai/describer-model", "api_base": base},
        "judges": [
            {"name": "lexical", "kind": "lexical"},
            {"name": "verdict", "kind": "llm", **model},
            {"name": "check", "kind": "checklist", **model},
            {"name": "pair", "kind": "pairwise", **model},
            {"name": "yes", "kind": "lmm_yes"},
            {
                "name": "emb",
                "kind": "embedding",
                "model": "litellm:openai/text-embedding-3-small",
                "api_base": base,
            },
        ],
        "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
    }
    path = tmp_path / "every-kind.yaml"
    path.write_text(yaml.safe_dump(config))
    code = main(["explain", str(path)])
    out = capsys.readouterr().out
    assert code == 0
    assert provider_server.requests == []
    assert not (tmp_path / "cache").exists()  # a scratch cache: nothing of the config's kept
    headings = [line for line in out.splitlines() if line.startswith("== ")]
    assert headings[0].startswith("== describer") and "describer-model" in headings[0]
    judge_calls = [h.split(":", 1)[0] for h in headings[1:] if not h.startswith("== judge lexical")]
    assert sorted(judge_calls) == [
        "== judge (embedding)",
        "== judge, checklist_decompose (structured)",
        "== judge, checklist_judge (structured)",
        "== judge, judge_similarity (structured)",
        "== judge, lmm_yes (text)",
        "== judge, pairwise (structured)",
    ], headings
    assert "== judge lexical (lexical): asks no model" in headings
    bodies = _bodies(out)
    assert len(bodies) == 7
    assert any(b.get("input") for b in bodies)  # the embedding's input
    # the checklist's verdict request lists a stand-in where the decomposition's elements go
    assert "known only once its decomposition answers" in out
    # as the wire has it: the embedding's URL and model without litellm's provider prefix,
    # and no `extra_body` key (the OpenAI SDK merges it into the body)
    (embedding,) = [b for b in bodies if b.get("input")]
    assert embedding["model"] == "text-embedding-3-small"
    assert f"POST {base}/embeddings" in out
    assert not any("extra_body" in b for b in bodies)
    # every judge's text quotes the stand-in, never a placeholder of made-up words
    assert out.count("known only once the describer answers") >= 3
    assert "titjudge estimate" not in out


def test_a_replay_describers_description_is_quoted_not_stood_in_for(
    provider_server, data, tmp_path, capsys, monkeypatch
):
    """A `replay:` describer's stored description is known without sending anything: the
    judge's request explain prints quotes it, as the run will send it."""
    import yaml

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    descriptions = [json.loads(line) for line in (data / "descriptions.jsonl").open()]
    config = {
        "name": "replayed",
        "data": {"manifest": str(data / "manifest.jsonl")},
        "describer": {"model": f"replay:{data / 'descriptions.jsonl'}"},
        "judges": [
            {
                "name": "verdict",
                "kind": "llm",
                "model": "litellm:openai/judge-model",
                "api_base": provider_server.openai_base,
            }
        ],
        "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
    }
    path = tmp_path / "replayed.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert provider_server.requests == []
    assert "known only once the describer answers" not in out
    (judge,) = _bodies(out)
    said = judge["messages"][-1]["content"]
    assert any(row["description"] in said for row in descriptions)
