"""Done as a researcher would: a config written as the docs show (providers.md), pointed at a self-hosted
server with no structured-output dialect set, scores every item with every LLM judge kind (a
score, a pairwise verdict, a checklist's decomposition and its answers, an expected score),
the server refusing at most one request while titjudge learns its dialect. The servers are the
fake speaking llama-cpp-python's, Ollama's, vLLM's and TGI's dialects (tests/doubles/
server_dialects.py cites each server's source)."""

from __future__ import annotations

import pytest
from doubles.server import FakeOpenAIServer
from judge_helpers import ModesResponder, run_config

import titjudge

pytestmark = pytest.mark.slow

JUDGES = [
    {"name": "score", "kind": "llm", "model": "litellm:openai/judge"},
    {"name": "pair", "kind": "pairwise", "model": "litellm:openai/judge"},
    {"name": "check", "kind": "checklist", "model": "litellm:openai/judge"},
    {"name": "exp", "kind": "llm", "score_mode": "expected", "model": "litellm:openai/judge"},
]


@pytest.mark.parametrize(
    ("server_kind", "refusals"),
    [("llama_cpp_python", 1), ("ollama", 0), ("vllm", 0), ("tgi", 1)],
)
def test_every_llm_judge_kind_scores_every_item_with_no_dialect_set(
    small_data, tmp_path, monkeypatch, server_kind, refusals
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")
    responder = ModesResponder(small_data)
    with FakeOpenAIServer(responder=responder, server=server_kind) as server:
        config = run_config(small_data, server.url, tmp_path, JUDGES)
        assert all("structured_output" not in j for j in config["judges"])
        outcome = titjudge.evaluate(config)
        refused = server.stats.by_fault["dialect"]
    assert refused == refusals
    record = titjudge.load_run(outcome.run_dir)
    for name in ("score", "check", "exp"):
        variant = record.variants[name]
        assert variant.n_scored == variant.n_items == 9 and variant.n_failed == 0, (name, variant)
    assert record.variants["pair"].n_pairs > 0 and record.variants["pair"].n_failed == 0
    assert responder.count("decompose") > 0 and responder.count("check") > 0
