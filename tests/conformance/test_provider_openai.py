"""What titjudge makes of each documented OpenAI and vLLM shape (chat and embeddings), through
its own litellm backends and call layer against the loopback stand-in (provider_server.py,
where each shape's source is cited on its builder).

As in test_provider_gemini.py: the assertions are on titjudge's behaviour, and where that
passes through litellm's own mapping, `relies_on` names it with the installed version.
"""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from doubles.relies import installed, relies_on
from provider_calls import KEY, ModelLayer
from provider_server import (
    embeddings_ok,
    openai_401_echo_key,
    openai_401_echo_key_whole,
    openai_429_insufficient_quota,
    openai_429_rate_limit,
    openai_length,
    openai_mask_key,
    openai_ok,
    vllm_error,
    vllm_max_logprobs_error,
)

from titjudge.models.core.base import (
    GenerateRequest,
    PermanentError,
    QuotaExhaustedError,
    TransientError,
)
from titjudge.models.core.clients import SEND
from titjudge.records.calls import TokenLogprobs
from titjudge.safety import REDACTED

QWEN = "Qwen/Qwen3-8B"
VLLM = f"hosted_vllm/{QWEN}"
SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}},
    "required": ["score"],
    "additionalProperties": False,
}

# ======================================================================================
# OpenAI
# ======================================================================================


@pytest.mark.parametrize("model", ["gpt-5", "o4-mini"])
def test_openai_reasoning_model_sends_effort_and_cap_and_reads_reasoning_tokens(
    layer: ModelLayer, model: str
) -> None:
    """`thinking: {effort: low, budget: 256}`: reasoning_effort low, an output cap of
    max_tokens + 256 as max_completion_tokens, and no temperature (reasoning models take only
    the default; litellm refuses to send any other); the reasoning tokens are read as
    thinking, within tokens_out."""
    layer.server.enqueue(model, openai_ok("fine", reasoning_tokens=64, model=model))
    thinking = {"effort": "low", "budget": 256}
    request = GenerateRequest(prompt="hi", max_tokens=44)
    gen = layer.generate(f"openai/{model}", request, thinking=thinking)
    sent = layer.server.last
    assert sent.body["reasoning_effort"] == "low"
    relies_on(
        f"sending max_tokens to {model} as max_completion_tokens",
        sent.body.get("max_completion_tokens") == 300 and "max_tokens" not in sent.body,
        sent.body,
    )
    assert "temperature" not in sent.body
    assert sent.header("authorization") == f"Bearer {KEY}"
    assert gen.text == "fine"
    assert (gen.tokens_out, gen.thinking_tokens, gen.max_tokens_sent) == (1 + 64, 64, 300)
    assert gen.logprobs is None  # the reply's "logprobs": null


def test_openai_length_is_a_truncation_record(layer: ModelLayer) -> None:
    layer.server.enqueue("gpt-4o", openai_length("cut"))
    gen = layer.generate("openai/gpt-4o", GenerateRequest(prompt="hi", max_tokens=5))
    assert layer.server.last.body["max_tokens"] == 5
    assert (gen.text, gen.finish_reason) == ("cut", "length")
    # OpenAI's "length" reply used the whole cap: its usage says so
    layer.server.enqueue("gpt-4o", openai_length("cut", completion_tokens=5))
    result = layer.text("openai/gpt-4o", GenerateRequest(prompt="hi", max_tokens=5))
    assert not result.ok and result.raw == "cut" and result.attempts == 1
    assert result.error is not None and result.error.startswith("truncated: ")
    assert "answer 5 tokens of max_tokens 5" in result.error and "raise max_tokens" in result.error


def test_openai_429_is_a_rate_limit_with_its_retry_after_header(layer: ModelLayer) -> None:
    layer.server.enqueue("gpt-4o", openai_429_rate_limit("7"))
    error = layer.failure("openai/gpt-4o")
    assert isinstance(error, TransientError), f"{error!r} ({installed()})"
    assert not isinstance(error, QuotaExhaustedError)
    assert error.rate_limited
    relies_on(
        "keeping the provider's response headers (Retry-After) on its RateLimitError",
        error.retry_after == 7.0,
        error.retry_after,
    )
    assert "Rate limit reached for gpt-4o" in str(error)


def test_openai_429_waits_its_retry_after_then_answers(layer: ModelLayer) -> None:
    layer.server.enqueue("gpt-4o", openai_429_rate_limit("1"), openai_ok("back"))
    started = time.monotonic()
    result = layer.text("openai/gpt-4o")  # backoff 0.01 s: only Retry-After can make the wait
    assert result.ok and result.value == "back" and result.attempts == 2
    assert time.monotonic() - started >= 0.95


def test_openai_insufficient_quota_stops_the_model(layer: ModelLayer) -> None:
    """Out of credit is a 429 like a rate limit, but waiting will not clear it: one request,
    then nothing more is sent to the model this run."""
    layer.server.enqueue("gpt-4o", openai_429_insufficient_quota())
    error = layer.failure("openai/gpt-4o")
    assert isinstance(error, QuotaExhaustedError), f"{error!r} ({installed()})"
    assert "insufficient_quota" in str(error)

    layer.server.reset()
    layer.server.enqueue("gpt-4o", openai_429_insufficient_quota(), openai_ok("never"))
    client = layer.client("openai/gpt-4o")
    first = asyncio.run(client.text(GenerateRequest(prompt="a"), role="describer", probe=SEND))
    second = asyncio.run(client.text(GenerateRequest(prompt="b"), role="describer", probe=SEND))
    assert not first.ok and first.error is not None
    assert first.error.startswith("quota exhausted: the account has no quota left")
    assert not second.ok and second.error is not None and "not sent" in second.error
    assert len(layer.server.requests) == 1


def test_openai_401_fails_at_once_and_never_shows_the_key(layer: ModelLayer) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    layer.server.enqueue("gpt-4o", openai_401_echo_key(key))
    error = layer.failure("openai/gpt-4o", key=key)
    assert isinstance(error, PermanentError), f"{error!r} ({installed()})"
    assert f"Incorrect API key provided: {openai_mask_key(key)}" in str(error)
    assert key not in str(error)


def test_a_401_echoing_the_whole_key_is_redacted_in_the_record(layer: ModelLayer) -> None:
    """Some servers echo the key whole (and litellm passes it on): the record shows it
    redacted, wherever it appears."""
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    layer.server.enqueue("gpt-4o", openai_401_echo_key_whole(key))
    error = layer.failure("openai/gpt-4o", key=key)
    assert isinstance(error, PermanentError) and key not in str(error) + repr(error)
    layer.server.enqueue("gpt-4o", openai_401_echo_key_whole(key))
    result = layer.text("openai/gpt-4o", key=key)
    assert not result.ok and result.attempts == 1 and result.error is not None
    assert f"Incorrect API key provided: {REDACTED}" in result.error
    assert key not in result.error


def test_openai_json_schema_is_sent_strict(layer: ModelLayer) -> None:
    layer.server.enqueue("gpt-4o", openai_ok('{"score": 3}'))
    request = GenerateRequest(prompt="hi", json_schema=SCHEMA, schema_name="verdict")
    gen = layer.generate("openai/gpt-4o", request)
    built = layer.backend("openai/gpt-4o").response_format(SCHEMA, "verdict")
    assert built["json_schema"]["strict"] is True
    relies_on(
        "sending response_format to OpenAI unchanged",
        layer.server.last.body.get("response_format") == built,
        layer.server.last.body.get("response_format"),
    )
    assert gen.text == '{"score": 3}'


# ======================================================================================
# vLLM (OpenAI-compatible server)
# ======================================================================================


def test_qwen3_thinking_switch_and_extra_body_reach_the_top_level(layer: ModelLayer) -> None:
    """Qwen3's thinking (off by default, sent explicitly) and any `params.extra_body` land as
    top-level body fields, merged."""
    layer.generate(VLLM, params={"extra_body": {"top_k": 20}})
    body = layer.server.last.body
    assert body["model"] == QWEN
    relies_on(
        "merging extra_body into the top level of the request body",
        body.get("chat_template_kwargs") == {"enable_thinking": False}
        and body.get("top_k") == 20
        and "extra_body" not in body,
        body,
    )


def test_qwen3_thinking_on_reserves_its_budget(layer: ModelLayer) -> None:
    layer.generate(VLLM, thinking={"budget": 1024})
    body = layer.server.last.body
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert body["max_tokens"] == 512 + 1024
    assert "thinking" not in body and "reasoning_effort" not in body


def test_vllm_logprobs_are_read_and_reasoning_is_not_the_answer(layer: ModelLayer) -> None:
    layer.server.enqueue(
        QWEN,
        openai_ok(
            "yes",
            logprobs=[("yes", -0.1, [("yes", -0.1), ("no", -2.4)])],
            reasoning_content="hmm",
            model=QWEN,
        ),
    )
    gen = layer.generate(VLLM, GenerateRequest(prompt="hi", top_logprobs=2))
    assert layer.server.last.body["logprobs"] is True
    assert layer.server.last.body["top_logprobs"] == 2
    assert gen.text == "yes"
    assert gen.logprobs == [TokenLogprobs("yes", -0.1, {"yes": -0.1, "no": -2.4})]


def test_vllm_json_schema_is_sent_as_built(layer: ModelLayer) -> None:
    request = GenerateRequest(prompt="hi", json_schema=SCHEMA, schema_name="v")
    layer.generate(VLLM, request)
    built = layer.backend(VLLM).response_format(SCHEMA, "v")
    assert built["json_schema"]["strict"] is False  # strict mode is OpenAI's own
    assert layer.server.last.body["response_format"] == built


@pytest.mark.parametrize("legacy", [False, True])
def test_vllm_error_bodies_fail_at_once_with_the_server_s_message(
    layer: ModelLayer, legacy: bool
) -> None:
    """Both vLLM error shapes (nested, and the flat one older servers send): a permanent
    failure whose record carries vLLM's message."""
    layer.server.enqueue(QWEN, vllm_max_logprobs_error(25, legacy=legacy))
    result = layer.text(VLLM, GenerateRequest(prompt="hi", top_logprobs=25))
    assert not result.ok and result.attempts == 1 and len(layer.server.requests) == 1
    assert result.error is not None
    assert "Requested sample logprobs of 25, which is greater than max allowed: 20" in result.error


def test_vllm_5xx_is_retried(layer: ModelLayer) -> None:
    layer.server.enqueue(QWEN, vllm_error("engine dead", 500, type_="InternalServerError"))
    error = layer.failure(VLLM)
    assert isinstance(error, TransientError), f"{error!r} ({installed()})"
    assert not error.rate_limited and "engine dead" in str(error)

    dead = vllm_error("engine dead", 500, type_="InternalServerError")
    layer.server.enqueue(QWEN, dead, dead)
    result = layer.text(VLLM, max_attempts=2)
    assert not result.ok and result.attempts == 2 and len(layer.server.requests) == 3
    assert result.error is not None and result.error.startswith("gave up after 2 attempts")
    assert "engine dead" in result.error


@pytest.mark.parametrize("provider", ["hosted_vllm", "openai"])
def test_embeddings_are_read_in_order_and_normalised(layer: ModelLayer, provider: str) -> None:
    model = "Qwen/Qwen3-Embedding-0.6B"
    layer.server.enqueue(model, embeddings_ok([[0.1, 0.2], [0.3, 0.4]]))
    texts = ["Instruct: judge\nQuery:a fox", "a fox on a stone"]
    vectors = asyncio.run(layer.embedder(f"{provider}/{model}").embed(texts))
    sent = layer.server.last
    assert sent.path == "/v1/embeddings"
    assert sent.body["input"] == texts
    norms = (math.hypot(0.1, 0.2), math.hypot(0.3, 0.4))
    expected = [[0.1 / norms[0], 0.2 / norms[0]], [0.3 / norms[1], 0.4 / norms[1]]]
    assert vectors == [pytest.approx(v) for v in expected]
