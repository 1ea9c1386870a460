"""`titjudge estimate` and `titjudge explain` send nothing, whatever the judge: every kind in the
judge registry (`judges.registry.kinds`, iterated, so a kind added later is covered without
touching this file) is estimated and explained against a loopback server that counts what it
is asked. A judge that forgot to hand its call mode on would send its calls there (and pay for
them on a real endpoint); the mode is a required keyword (tests/test_call_mode.py), so such a
judge fails mypy first, and this test if it spells `probe=SEND` where it meant its probe."""

from __future__ import annotations

import json
from typing import Any

import pytest
from builders import LOOPBACK_JUDGE, loopback, run_config, write_config
from doubles.server import FakeOpenAIServer
from doubles.server_app import CHAT, EMBEDDINGS
from doubles.tiny_models import build_tiny_clip

from titjudge.cli import main
from titjudge.judges.registry import JudgeKind, kinds

#: what a kind needs beyond its name, kind and model at the loopback server; a kind not named
#: here gets the loopback LLM judge (a kind that needs more fails below, naming itself)
NEEDS: dict[str, dict[str, Any]] = {
    "embedding": {"model": "litellm:openai/text-embedding-3-small"},
    # a local model (a tiny checkpoint built by the test): no api_base, nothing to send
    "clip": {"api_base": None},
    # a jury combines other judges of the run (MEMBERS), with no model of its own
    "jury": {"members": ["m1", "m2"]},
}
#: the other judges a kind needs in the run
MEMBERS: dict[str, list[dict[str, Any]]] = {
    "jury": [{"name": "m1", "kind": "lexical"}, {"name": "m2", "kind": "lexical"}],
}


def _judge(name: str, kind: JudgeKind, url: str) -> dict[str, Any]:
    """One judge of `kind` whose model (its own, or the describer's) is at `url`."""
    section: dict[str, Any] = {"name": "under_test", "kind": name}
    fields = kind.config.model_fields
    if "model" in fields and not kind.describer_bound:
        section.update(model=LOOPBACK_JUDGE, **loopback(url))
    return {**section, **NEEDS.get(name, {})}


@pytest.fixture(scope="module")
def server():
    """One server for every kind: each test reads what it was asked since it began."""
    with FakeOpenAIServer(responder="auto") as found:
        yield found


def _paid(server: FakeOpenAIServer) -> int:
    """The requests a provider bills (chat and embeddings; a model listing costs nothing)."""
    return server.stats.by_endpoint[CHAT] + server.stats.by_endpoint[EMBEDDINGS]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(kinds()))
def test_estimate_and_explain_send_nothing_for_every_judge_kind(
    name, server, synth_data, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    kind = kinds()[name]
    judge = _judge(name, kind, server.url)
    if name == "clip":
        judge["model"] = f"clip:{build_tiny_clip(tmp_path / 'clip')}"
    config = run_config(
        synth_data, tmp_path, url=server.url, judges=[judge, *MEMBERS.get(name, [])]
    )
    path = str(write_config(config, tmp_path))
    server.reset_stats()
    capsys.readouterr()

    assert main(["estimate", path, "--json"]) == 0, capsys.readouterr().err
    found = json.loads(capsys.readouterr().out)
    assert main(["explain", path]) == 0, capsys.readouterr().err
    explained = capsys.readouterr().out

    assert _paid(server) == 0, f"judge kind {name!r} sent {_paid(server)} requests"
    # not vacuous: the estimate met the judge's own calls (those that have a model)
    judged = [line for line in found["lines"] if line["role"] == "judge"]
    assert bool(judged) == ("model" in kind.config.model_fields), found["lines"]
    assert all(line["calls"] > 0 for line in judged)
    assert "judge" in explained if judged else "describer" in explained
