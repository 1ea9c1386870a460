"""Each reply's reason kept (issue 30): a refusal with its text and counted as blocked, an
Azure content filter counted as blocked, an answer only in vLLM's reasoning field named with
the setting to change, an OpenRouter choice-level error with its code and message (retried
when transient), and a call refused before any token costs $0, not "unpriced"."""

from __future__ import annotations

import asyncio

import pytest
from provider_replies import (
    REFUSAL,
    azure_content_filter_400,
    openai_refusal,
    openrouter_choice_error,
    vllm_reasoning_only,
)
from provider_server import (
    Reply,
    openai_401_echo_key,
    openai_429_insufficient_quota,
    openai_ok,
)

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub

GOOD = '{"rationale": "fine", "score": 80}'
OPENAI_KEY = "sk-proj-reply-reasons-0123456789abcdef"


def _client(tmp_path, model, api_base, **options):
    opts = {"api_base": api_base, "backoff_initial": 0.01, "backoff_max": 1.0, **options}
    return ModelHub(CallCache(tmp_path / "cache")).text_client(model, ModelOptions(**opts))


def _verdict(client):
    request = GenerateRequest(prompt="PROMPT: a cat\nDESCRIPTION: a cat")
    return asyncio.run(client.structured(request, JudgeVerdict, role="judge", probe=SEND))


def test_a_refusal_is_blocked_with_its_text(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    provider_server.enqueue("gpt-4o", openai_refusal())
    client = _client(tmp_path, "litellm:openai/gpt-4o", provider_server.openai_base)
    result = _verdict(client)
    assert not result.ok and result.error.startswith("blocked: the model refused")
    assert REFUSAL in result.error
    assert len(provider_server.requests) == 1  # a refusal is not re-asked
    assert client.usage["judge"].blocked == 1


def test_a_refused_description_is_blocked_too(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    provider_server.enqueue("gpt-4o", openai_refusal("I can't describe this image."))
    client = _client(tmp_path, "litellm:openai/gpt-4o", provider_server.openai_base)
    result = asyncio.run(
        client.text(GenerateRequest(prompt="Describe."), role="describer", probe=SEND)
    )
    assert not result.ok and "I can't describe this image." in result.error
    assert client.usage["describer"].blocked == 1


def test_an_azure_content_filter_is_blocked(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("AZURE_API_KEY", "azure-test-key-0123456789")
    monkeypatch.setenv("AZURE_API_VERSION", "2024-10-21")
    monkeypatch.setenv("AZURE_API_BASE", provider_server.url)
    provider_server.enqueue("*", azure_content_filter_400())
    client = _client(tmp_path, "litellm:azure/gpt-4o", provider_server.url)
    result = _verdict(client)
    assert not result.ok and result.error.startswith("blocked: the provider's content filter")
    assert len(provider_server.requests) == 1  # not retried
    usage = client.usage["judge"]
    assert usage.blocked == 1 and usage.cost == 0.0  # refused before any token


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_an_answer_only_in_reasoning_is_named(provider_server, tmp_path, field):
    provider_server.enqueue(
        "Qwen/Qwen3-8B", vllm_reasoning_only('Okay, the answer is {"score": 80}', field=field)
    )
    client = _client(tmp_path, "litellm:hosted_vllm/Qwen/Qwen3-8B", provider_server.openai_base)
    result = _verdict(client)
    assert not result.ok
    assert result.error.startswith("empty reply: the answer is only in the reply's reasoning")
    assert "--reasoning-parser" in result.error and "thinking: off" in result.error


def test_a_transient_choice_error_is_retried(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-0123456789")
    provider_server.enqueue(
        "openai/gpt-4o", openrouter_choice_error(502), openai_ok(GOOD, model="openai/gpt-4o")
    )
    client = _client(tmp_path, "litellm:openrouter/openai/gpt-4o", provider_server.openai_base)
    result = _verdict(client)
    assert result.ok and result.value.score == 80 and result.attempts == 2


def test_a_choice_error_keeps_its_code_and_message(provider_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-0123456789")
    provider_server.enqueue(
        "openai/gpt-4o", openrouter_choice_error(400, "Invalid tool schema", provider="Azure")
    )
    client = _client(tmp_path, "litellm:openrouter/openai/gpt-4o", provider_server.openai_base)
    result = _verdict(client)
    assert not result.ok and len(provider_server.requests) == 1
    assert "finish_reason=error" in result.error and "code 400: Invalid tool schema" in result.error
    assert "provider Azure" in result.error


@pytest.mark.parametrize(
    "reply",
    [openai_401_echo_key(OPENAI_KEY), openai_429_insufficient_quota()],
    ids=["401", "quota"],
)
def test_a_call_refused_before_any_token_costs_nothing(
    provider_server, tmp_path, monkeypatch, reply
):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    provider_server.enqueue("gpt-4o", reply)
    client = _client(tmp_path, "litellm:openai/gpt-4o", provider_server.openai_base)
    result = _verdict(client)
    assert not result.ok and result.cost == 0.0
    usage = client.usage["judge"]
    assert usage.unpriced_calls == 0 and usage.cost == 0.0
    assert "unpriced" not in usage.text() and "unknown" not in usage.text()


def test_a_closed_port_costs_nothing_but_a_timeout_is_unknown(provider_server, tmp_path):
    closed = _client(tmp_path, "litellm:hosted_vllm/m", "http://127.0.0.1:9/v1", max_attempts=2)
    assert _verdict(closed).cost == 0.0
    provider_server.enqueue("slow", Reply(body=openai_ok(GOOD, model="slow").body, delay=2.0))
    slow = _client(
        tmp_path,
        "litellm:hosted_vllm/slow",
        provider_server.openai_base,
        timeout=0.3,
        max_attempts=1,
    )
    result = _verdict(slow)
    assert not result.ok and result.cost is None  # it may have been generated and billed


@pytest.mark.parametrize("price", [None, {"input": 10, "output": 30}], ids=["litellm", "price"])
def test_a_timeout_is_unknown_whoever_prices_the_model(provider_server, tmp_path, price):
    """A model with a `price` option is priced by titjudge, but a failed call's cost is still
    unknown unless it was refused before any token (only a local model is always $0)."""
    provider_server.enqueue("slow", Reply(body=openai_ok(GOOD, model="slow").body, delay=2.0))
    options = {"price": price} if price is not None else {}
    slow = _client(
        tmp_path,
        "litellm:hosted_vllm/slow",
        provider_server.openai_base,
        timeout=0.3,
        max_attempts=1,
        **options,
    )
    result = _verdict(slow)
    assert not result.ok and result.cost is None
    assert slow.usage["judge"].unpriced_calls == 1


def test_a_priced_reply_without_usage_costs_unknown(provider_server, tmp_path):
    """A server that reports no usage: titjudge cannot price the reply itself, so its cost is
    unknown, never $0 (a self-hosted server may omit `usage`, which the API marks optional)."""
    body = dict(openai_ok(GOOD, model="bare").body)
    body.pop("usage")
    provider_server.enqueue("bare", Reply(body=body))
    client = _client(
        tmp_path,
        "litellm:hosted_vllm/bare",
        provider_server.openai_base,
        price={"input": 10, "output": 30},
    )
    result = _verdict(client)
    assert result.ok and result.cost is None
