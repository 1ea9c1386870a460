"""Which model answered (issue 29): the rule that tells a re-routed model from the configured
one, the per-model counts a run keeps, and cache keys that recording it left unchanged."""

import asyncio
import dataclasses

import pytest
from doubles.server import FakeOpenAIServer, build_responder
from doubles.server_request import as_reply

from titjudge.cache.store import CallCache
from titjudge.models.calls.keys import embedding_key, generation_key
from titjudge.models.calls.provenance import provenance, refusal, same_model
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.calls import CallResult, Usage
from titjudge.records.provenance import provenance_lines
from titjudge.records.spec import parse_model_spec

PROMPT = "PROMPT:\na red cat\n\nDESCRIPTION:\na red cat"


@pytest.mark.parametrize(
    ("configured", "answered"),
    [
        ("litellm:openai/gpt-4o", "gpt-4o"),
        ("litellm:openai/gpt-4o", "gpt-4o-2024-08-06"),  # a dated snapshot of the alias
        ("litellm:openai/gpt-4-turbo", "gpt-4-turbo-0125"),
        ("litellm:gemini/gemini-2.5-pro", "gemini-2.5-pro"),
        ("litellm:gemini/gemini-2.5-pro", "models/gemini-2.5-pro"),
        ("litellm:gemini/gemini-1.5-pro", "gemini-1.5-pro-002"),
        ("litellm:anthropic/claude-3-5-sonnet", "claude-3-5-sonnet-20240620"),
        ("litellm:vertex_ai/claude-3-5-sonnet", "claude-3-5-sonnet@20240620"),
        ("litellm:hosted_vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        ("litellm:hosted_vllm/Qwen/Qwen3-8B", "qwen3-8b"),
        ("hf:/models/qwen2.5-vl", "/models/qwen2.5-vl"),
    ],
)
def test_the_configured_model_or_its_snapshot_is_the_same_model(configured, answered):
    assert same_model(configured, answered)
    assert refusal(configured, answered) is None


@pytest.mark.parametrize(
    ("configured", "answered"),
    [
        ("litellm:gemini/gemini-2.5-pro", "gemini-3-pro-preview"),  # a retired model re-routed
        ("litellm:gemini/gemini-2.5-pro", "gemini-2.5-pro-preview-06-05"),
        ("litellm:gemini/gemini-2.5-pro", "gemini-2.5-flash"),
        ("litellm:openai/gpt-4o", "gpt-4o-mini"),
        ("litellm:openai/gpt-4o", "gpt-4o-mini-2024-07-18"),
        ("litellm:openai/gpt-4o-2024-08-06", "gpt-4o-2024-11-20"),  # a pinned snapshot moved
        ("litellm:openai/gpt-4o-2024-08-06", "gpt-4o"),
        ("litellm:hosted_vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-32B"),
    ],
)
def test_another_model_is_not_the_configured_one(configured, answered):
    assert not same_model(configured, answered)
    reason = refusal(configured, answered)
    assert reason is not None and answered in reason and configured in reason


def test_a_reply_that_names_no_model_is_refused_only_when_fresh():
    assert "does not say which model answered" in refusal("litellm:openai/gpt-4o", None)
    # an answer cached before titjudge recorded the model is kept
    assert refusal("litellm:openai/gpt-4o", None, cached=True) is None


def test_usage_counts_the_answering_models_and_a_snapshot_difference_keeps_them():
    def call(model, ok=True, cached=False):
        return CallResult(ok=ok, raw="text", cached=cached, answered_by=model)

    ledger = Usage()
    for result in (call("gpt-4o-2024-08-06"), call("gpt-4o-2024-08-06", cached=True), call(None)):
        ledger.add(result)
    ledger.add(CallResult(ok=True, value=[1.0]))  # an embedding records no model: not counted
    before = ledger + Usage()  # a snapshot, not the ledger itself
    ledger.add(call("gpt-4o-2024-11-20"))
    ledger.add(call(None, ok=False))  # no reply: not an unrecorded answer
    assert before.answered_by == {"gpt-4o-2024-08-06": 2} and before.unrecorded_model == 1
    since = ledger - before
    assert since.answered_by == {"gpt-4o-2024-11-20": 1} and since.unrecorded_model == 0
    assert Usage.from_json(ledger.to_json()) == ledger
    record = provenance({"litellm:openai/gpt-4o": ledger, "lexical": Usage(calls=3)})
    assert record == {
        "litellm:openai/gpt-4o": {
            "answered_by": {"gpt-4o-2024-08-06": 2, "gpt-4o-2024-11-20": 1},
            "unrecorded": 1,
            "other_models": [],
            "mixed": True,
        }
    }
    [(line, warning)] = provenance_lines(record)
    assert warning and line == (
        "litellm:openai/gpt-4o: answered by 2 models, gpt-4o-2024-08-06 (2 calls), "
        "gpt-4o-2024-11-20 (1 call); 1 call cached without a record of the model: the run "
        "mixes them (an alias that moved)"
    )


def test_summary_lines_show_both_names_and_warn_only_for_another_model():
    record = provenance(
        {
            "litellm:gemini/gemini-2.5-pro": Usage(answered_by={"gemini-3-pro-preview": 6}),
            "litellm:openai/gpt-4o": Usage(answered_by={"gpt-4o-2024-08-06": 4}),
            "litellm:hosted_vllm/Qwen/Qwen3-8B": Usage(answered_by={"Qwen/Qwen3-8B": 5}),
            "hf:/m/qwen": Usage(answered_by={"/m/qwen": 2}),
            "litellm:openai/judge": Usage(unrecorded_model=3),
        }
    )
    assert record["litellm:gemini/gemini-2.5-pro"]["other_models"] == ["gemini-3-pro-preview"]
    assert provenance_lines(record) == [
        (
            "litellm:gemini/gemini-2.5-pro: answered by gemini-3-pro-preview (6 calls). NOT the "
            "configured model: gemini-3-pro-preview (a re-routed or renamed model; set "
            "run.require_model: exact to refuse it)",
            True,
        ),
        (
            "litellm:openai/gpt-4o: answered by gpt-4o-2024-08-06 (4 calls) (its snapshot)",
            False,
        ),
        (
            "litellm:openai/judge: 3 calls answered from the cache without a record of which "
            "model gave them (cached before titjudge recorded it)",
            False,
        ),
    ]


def test_cache_keys_are_unchanged_by_recording_the_answering_model():
    """The digests the starting commit (c148aa3) computed: existing caches stay valid."""
    spec = parse_model_spec("litellm:openai/gpt-4o")
    request = GenerateRequest(prompt="PROMPT: a red cat", system="judge", max_tokens=64)
    template = {"name": "t", "version": "1", "sha256": "x"}
    key = generation_key(spec, request, params={"seed": 1}, template=template, purpose="structured")
    assert key == "c4805177e7856aa2033662c204276d416b539d85f4fc20b9dfd78c8032c59cc3"
    embedded = embedding_key(parse_model_spec("litellm:openai/text-embedding-3-small"), "a red cat")
    assert embedded == "72f0e8cc5e4b4f64efb2cad74d5de47991c658b69d1831a9ffbc331e8e4ba024"


def _answering_as(model: str):
    auto = build_responder("auto")

    def respond(request):
        return dataclasses.replace(as_reply(auto(request)), model=model)

    return respond


def _ask(tmp_path, server, require_model="report"):
    """(the call's result, the model's usage, the cache, the key the call was cached under)"""
    hub = ModelHub(CallCache(tmp_path / "cache"), require_model=require_model)
    client = hub.text_client(
        "litellm:openai/gpt-4o", ModelOptions(api_base=server.url, max_attempts=1)
    )
    request = GenerateRequest(prompt=PROMPT)
    result = asyncio.run(client.text(request, role="describer", probe=SEND))
    key = generation_key(
        client.backend.spec, request, params=client.params, options=client.key_options
    )
    return result, hub.usage_by_model()["litellm:openai/gpt-4o"], hub.cache, key


def test_an_answer_cached_before_the_record_is_still_a_hit(tmp_path, monkeypatch):
    """An entry as the starting commit stored it (no `answered_by`) answers without a request,
    in both modes, and counts as an answer with no recorded model."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(responder=_answering_as("gpt-4o-2024-08-06")) as server:
        first, _, cache, key = _ask(tmp_path, server)
        assert first.ok and first.answered_by == "gpt-4o-2024-08-06"
        entry = cache.get(key)
        assert entry["answered_by"] == "gpt-4o-2024-08-06"
        del entry["answered_by"]  # the value format the starting commit wrote
        cache.set(key, entry, "litellm:openai/gpt-4o")
        cache.close()
        for mode in ("report", "exact"):
            again, usage, cache, _ = _ask(tmp_path, server, mode)
            cache.close()
            assert again.ok and again.cached and again.value == first.value
            assert again.answered_by is None
            assert usage.unrecorded_model == 1 and usage.answered_by == {}
        assert server.stats.total == 1
