"""Which model answered, on the providers' own reply shapes (issue 29), through litellm against
the stand-in in provider_server.py.

Gemini: GenerateContentResponse carries `modelVersion`, "Output only. The model version used
to generate the response." (Gemini API reference,
https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse). From 1 December
2026 requests for gemini-2.5-pro are answered by another model, which the reply names there.
OpenAI: the chat completion object's `model` is "The model used for the chat completion"
(OpenAI API reference, "The chat completion object"), a dated snapshot such as
gpt-4o-2024-08-06 for the alias gpt-4o.
"""

from __future__ import annotations

import asyncio
import json

from provider_server import gemini_ok, openai_ok

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub

GEMINI = "litellm:gemini/gemini-2.5-pro"
GPT4O = "litellm:openai/gpt-4o"
GOOD = json.dumps({"rationale": "fine", "score": 80})


def _verdict(tmp_path, model, api_base, require_model="report"):
    options = {"api_base": api_base, "max_attempts": 1}
    if model == GEMINI:
        options["thinking"] = {"budget": 128}
    hub = ModelHub(CallCache(tmp_path / "cache"), require_model=require_model)
    client = hub.text_client(model, ModelOptions(**options))
    request = GenerateRequest(prompt="PROMPT: a cat\nDESCRIPTION: a cat")
    return asyncio.run(client.structured(request, JudgeVerdict, role="judge", probe=SEND))


def test_gemini_reply_from_another_model_is_recorded(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-key-000000")
    provider_server.enqueue("gemini-2.5-pro", gemini_ok(GOOD, model="gemini-3-pro-preview"))
    first = _verdict(tmp_path, GEMINI, provider_server.gemini_base)
    assert first.ok and first.value.score == 80
    assert first.answered_by == "gemini-3-pro-preview"
    # the cached answer keeps the model that gave it
    again = _verdict(tmp_path, GEMINI, provider_server.gemini_base)
    assert again.cached and again.answered_by == "gemini-3-pro-preview"
    assert len(provider_server.requests) == 1


def test_gemini_reply_from_another_model_fails_under_exact(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-key-000000")
    rerouted = gemini_ok(GOOD, model="gemini-3-pro-preview")
    provider_server.enqueue("gemini-2.5-pro", rerouted, rerouted, gemini_ok(GOOD))
    for _ in range(2):  # a refused reply is never cached: the second call is sent again
        refused = _verdict(tmp_path, GEMINI, provider_server.gemini_base, "exact")
        assert not refused.ok and refused.value is None and not refused.cached
        assert refused.error == (
            f"answered by gemini-3-pro-preview, not the configured {GEMINI} (a re-routed or "
            "renamed model; run.require_model: exact refuses it)"
        )
    # the configured model's own reply is an answer, and is cached
    kept = _verdict(tmp_path, GEMINI, provider_server.gemini_base, "exact")
    assert kept.ok and kept.answered_by == "gemini-2.5-pro"
    assert _verdict(tmp_path, GEMINI, provider_server.gemini_base, "exact").cached
    assert len(provider_server.requests) == 3


def test_openai_dated_snapshot_is_the_configured_model(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider_server.enqueue(
        "gpt-4o", openai_ok(GOOD, model="gpt-4o-2024-08-06"), openai_ok(GOOD, model="gpt-4o-mini")
    )
    kept = _verdict(tmp_path, GPT4O, provider_server.openai_base, "exact")
    assert kept.ok and kept.answered_by == "gpt-4o-2024-08-06"
    refused = _verdict(tmp_path / "other", GPT4O, provider_server.openai_base, "exact")
    assert not refused.ok and refused.error.startswith("answered by gpt-4o-mini, not the")
