"""The call layer (cache, retries, validation) on provider shapes the shipped-config runs do
not reach, through litellm against the stand-in in provider_server.py."""

from __future__ import annotations

import asyncio
import copy
import json

from provider_server import (
    Reply,
    gemini_429_retry_info,
    gemini_ok,
    openai_ok,
    vllm_error,
)

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub

GEMINI = "litellm:gemini/gemini-2.5-pro"
GOOD = json.dumps({"rationale": "fine", "score": 80})


def _client(tmp_path, model, api_base, **options):
    opts = {"api_base": api_base, "backoff_initial": 0.01, "backoff_max": 5.0, **options}
    if model == GEMINI:
        opts.setdefault("thinking", {"budget": 128})
    return ModelHub(CallCache(tmp_path / "cache")).text_client(model, ModelOptions(**opts))


def _verdict(client, prompt="PROMPT: a cat\nDESCRIPTION: a cat"):
    return asyncio.run(
        client.structured(GenerateRequest(prompt=prompt), JudgeVerdict, role="judge", probe=SEND)
    )


def _with_quota_id(reply: Reply, quota_id: str) -> Reply:
    body = copy.deepcopy(reply.body)
    for detail in body["error"]["details"]:
        for violation in detail.get("violations", []):
            violation["quotaId"] = quota_id
    return Reply(status=reply.status, body=body)


def test_gemini_daily_quota_stops_the_model(provider_server, tmp_path, monkeypatch):
    """A per-day quota (QuotaFailure quotaId ...PerDay...; langchain-google PR #946 shows the
    shape) will not clear by waiting: one request, then nothing more is sent. Its retryDelay
    is an hour: a client that waited it out would end in pytest's timeout."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-key-000000")
    daily = _with_quota_id(
        gemini_429_retry_info(delay="3600s"), "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
    )
    provider_server.enqueue("gemini-2.5-pro", daily, gemini_ok(GOOD))
    client = _client(tmp_path, GEMINI, provider_server.gemini_base)
    first = _verdict(client)
    second = _verdict(client, "PROMPT: a dog\nDESCRIPTION: a dog")
    assert not first.ok and first.error.startswith("quota exhausted: the project's daily")
    assert not second.ok and "not sent" in second.error
    assert len(provider_server.requests) == 1


def test_gemini_rate_limit_whose_text_holds_403_is_still_retried(
    provider_server, tmp_path, monkeypatch
):
    """litellm 1.106 and earlier map a Gemini error to 403 when "403" occurs anywhere in its
    text (as in "Please retry in 14.403217s."); the body's RESOURCE_EXHAUSTED decides."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-key-000000")
    provider_server.enqueue(
        "gemini-2.5-pro", gemini_429_retry_info(delay="1s", retry_in="1.403217s"), gemini_ok(GOOD)
    )
    result = _verdict(_client(tmp_path, GEMINI, provider_server.gemini_base))
    assert result.ok and result.value.score == 80 and result.attempts == 2


def test_a_failed_reask_keeps_the_first_replys_usage(provider_server, tmp_path):
    """Invalid JSON, then the re-ask fails (vLLM's error body, vllm-project/vllm#22099):
    the first reply's tokens still count and the error says both things."""
    provider_server.enqueue(
        "judge",
        openai_ok("no json here", model="judge", completion_tokens=42),
        vllm_error("boom", 400),
    )
    client = _client(tmp_path, "litellm:hosted_vllm/judge", provider_server.openai_base)
    result = _verdict(client)
    assert not result.ok and result.tokens_out == 42
    assert result.error.startswith("re-ask failed: ") and "boom" in result.error
    assert "first reply: the reply contains no JSON object" in result.error


def test_empty_choices_is_a_failure_record(provider_server, tmp_path):
    body = json.loads(json.dumps(openai_ok("x", model="judge").body))
    body["choices"] = []
    provider_server.enqueue("judge", Reply(body=body))
    result = _verdict(
        _client(tmp_path, "litellm:hosted_vllm/judge", provider_server.openai_base, max_attempts=1)
    )
    assert not result.ok and "no choices" in result.error and "IndexError" not in result.error


def test_what_thinking_sends_is_part_of_the_cache_key(provider_server, tmp_path):
    """Qwen3 on vLLM: thinking off (the default, sent explicitly) and on are different answers;
    the same setting again is a cache hit."""
    provider_server.enqueue("Qwen/Qwen3-8B", *[openai_ok(GOOD, model="Qwen/Qwen3-8B")] * 3)
    hub = ModelHub(CallCache(tmp_path / "cache"))
    base = provider_server.openai_base

    def ask(**options):
        client = hub.text_client(
            "litellm:hosted_vllm/Qwen/Qwen3-8B", ModelOptions(api_base=base, **options)
        )
        return _verdict(client)

    assert not ask().cached
    assert not ask(thinking="on").cached
    assert ask().cached and ask(thinking="on").cached
    sent = [
        r.body["chat_template_kwargs"]["enable_thinking"]
        for r in provider_server.requests
        if r.method == "POST"
    ]
    assert sent == [False, True]
