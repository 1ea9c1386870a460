"""Which model answered (issue 29), end to end through the fake OpenAI server: its replies name
another model than the one asked for (`model` in the chat.completion body), as a provider that
re-routes a retired model does. The run records it per call (cache, items.jsonl), reports it
(summary line, summary.json, audit), and `run.require_model: exact` refuses it."""

import dataclasses
import json
from pathlib import Path

import pytest
from doubles.server import FakeOpenAIServer, build_responder
from doubles.server_request import ChatRequest, as_reply
from fault_helpers import config, descriptions

from titjudge.cli import main

#: what the server says answered, per model asked for: the describer's dated snapshot (the
#: same model by titjudge's rule) and another model for the judge (a re-route)
ANSWERS = {"vlm": "vlm-2024-08-06", "judge": "judge-v2"}
REROUTED = "NOT the configured model: judge-v2"


def _server(data: Path) -> FakeOpenAIServer:
    auto = build_responder("auto", descriptions=descriptions(data))

    def respond(request: ChatRequest):
        return dataclasses.replace(as_reply(auto(request)), model=ANSWERS[request.model])

    return FakeOpenAIServer(responder=respond)


def _run(path: str, out: Path, *extra: str) -> int:
    return main(["run", path, "--limit", "6", "--out", str(out), *extra])


def _lines(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "items.jsonl").read_text().splitlines()]


def _said(capsys) -> str:
    return " ".join(capsys.readouterr().out.split())  # the console wraps at its width


@pytest.mark.slow
def test_a_rerouted_judge_is_recorded_and_reported(fault_data, tmp_path, capsys):
    with _server(fault_data) as server:
        cfg = config(fault_data, server.url, tmp_path, concurrency=4)
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps(cfg))
        assert _run(str(path), tmp_path / "first") == 0
        first = _said(capsys)
        assert _run(str(path), tmp_path / "cached") == 0  # the cached answers keep their model
        cached = _said(capsys)
        assert server.stats.total == 12
    for said in (first, cached):
        assert (
            "litellm:openai/judge: answered by judge-v2 (6 calls). NOT the configured model: "
            "judge-v2 (a re-routed or renamed model; set run.require_model: exact to refuse it)"
        ) in said
        assert "litellm:openai/vlm: answered by vlm-2024-08-06 (6 calls) (its snapshot)" in said
    for run_dir in (tmp_path / "first", tmp_path / "cached"):
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["answered_by"] == {
            "litellm:openai/judge": {
                "answered_by": {"judge-v2": 6},
                "unrecorded": 0,
                "other_models": ["judge-v2"],
                "mixed": False,
            },
            "litellm:openai/vlm": {
                "answered_by": {"vlm-2024-08-06": 6},
                "unrecorded": 0,
                "other_models": [],
                "mixed": False,
            },
        }
        lines = _lines(run_dir)
        assert {line["describer"]["answered_by"] for line in lines} == {"vlm-2024-08-06"}
        by_variant = {(line["variant"], tuple(line["answered_by"])) for line in lines}
        assert by_variant == {("tit_llm", ("judge-v2",)), ("lexical", ())}
        assert {line["status"] for line in lines} == {"ok"}

    assert main(["audit", str(tmp_path / "cached")]) == 0
    assert REROUTED in _said(capsys)
    assert main(["audit", str(tmp_path / "cached"), "--html", str(tmp_path / "page")]) == 0
    assert REROUTED in (tmp_path / "page" / "bundle.js").read_text()  # what the page shows
    item = _lines(tmp_path / "cached")[0]["item_id"]
    assert main(["audit", str(tmp_path / "cached"), "--item", item]) == 0
    assert "answered by: judge-v2" in _said(capsys)


@pytest.mark.slow
def test_require_model_exact_makes_another_models_reply_a_failure(fault_data, tmp_path, capsys):
    with _server(fault_data) as server:
        cfg = config(fault_data, server.url, tmp_path, concurrency=4)
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps(cfg))
        exact = ("--set", "run.require_model=exact")
        assert _run(str(path), tmp_path / "exact", *exact) == 1  # the judge's items failed
        assert server.stats.total == 12
        lines = _lines(tmp_path / "exact")
        judged = [line for line in lines if line["variant"] == "tit_llm"]
        assert {line["status"] for line in judged} == {"failed"}
        assert {line["score"] for line in judged} == {None}
        for line in judged:
            assert line["error"] == (
                "answered by judge-v2, not the configured litellm:openai/judge (a re-routed or "
                "renamed model; run.require_model: exact refuses it)"
            )
            assert line["answered_by"] == ["judge-v2"]
        # the describer's snapshot is the configured model: kept and cached
        assert {line["describer"]["status"] for line in lines} == {"ok"}
        summary = json.loads((tmp_path / "exact" / "summary.json").read_text())
        assert summary["usage"]["judge"]["failures"] == 6
        assert summary["answered_by"]["litellm:openai/judge"]["other_models"] == ["judge-v2"]
        assert REROUTED in _said(capsys)

        # a refused reply was never cached: asked again, and only it
        assert _run(str(path), tmp_path / "exact-again", *exact) == 1
        assert server.stats.total == 18
        # reported, not refused, by default: now the judge's answers are cached ...
        assert _run(str(path), tmp_path / "report") == 0
        assert server.stats.total == 24
        # ... and an exact run asks again for a cached answer recorded from another model
        assert _run(str(path), tmp_path / "exact-3", *exact) == 1
        assert server.stats.total == 30
    statuses = {
        line["status"] for line in _lines(tmp_path / "report") if line["variant"] == "tit_llm"
    }
    assert statuses == {"ok"}
