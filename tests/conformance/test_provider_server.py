"""What litellm really does with each documented provider shape, driven through the
loopback stand-in in provider_server.py (retries off, api_base = the stand-in).

These tests document litellm's behaviour for the model layer; each shape's source is cited
on its builder. If a litellm upgrade changes a behaviour, the failing test says which.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import litellm  # noqa: E402  (the env var must be set first)
import pytest  # noqa: E402
from provider_server import (  # noqa: E402
    ProviderServer,
    Reply,
    embeddings_ok,
    gemini_400_bad_key,
    gemini_400_budget_zero,
    gemini_400_empty_part,
    gemini_429_retry_info,
    gemini_empty_text_parts,
    gemini_generation_config,
    gemini_max_tokens_no_parts,
    gemini_max_tokens_partial,
    gemini_ok,
    gemini_prompt_blocked,
    gemini_safety,
    openai_401_echo_key,
    openai_401_echo_key_whole,
    openai_429_insufficient_quota,
    openai_429_rate_limit,
    openai_length,
    openai_mask_key,
    openai_ok,
    schema_ref_sibling_paths,
    vllm_error,
    vllm_max_logprobs_error,
)
from pydantic import BaseModel, Field  # noqa: E402

litellm.suppress_debug_info = True

GEMINI = "gemini-2.5-pro"
USER = [{"role": "user", "content": "hi"}]
NO_RETRY: dict[str, Any] = {"num_retries": 0, "max_retries": 0, "api_key": "test-key"}


def gemini_call(server: ProviderServer, messages: list | None = None, **kwargs: Any) -> Any:
    params = {**NO_RETRY, **kwargs}
    return litellm.completion(
        model=f"gemini/{GEMINI}", messages=messages or USER, api_base=server.gemini_base, **params
    )


def chat_call(
    server: ProviderServer, model: str, messages: list | None = None, **kwargs: Any
) -> Any:
    params = {**NO_RETRY, **kwargs}
    return litellm.completion(
        model=model, messages=messages or USER, api_base=server.openai_base, **params
    )


def raised(fn: Any, *args: Any, **kwargs: Any) -> BaseException:
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # the test asserts the class
        return exc
    raise AssertionError("the call succeeded; a failure was expected")


# ======================================================================================
# Gemini (litellm provider "gemini/")
# ======================================================================================


def test_gemini_url_and_key_header(provider_server: ProviderServer) -> None:
    """api_base=B -> POST {B}/models/{model}:generateContent; key in x-goog-api-key, not ?key=."""
    provider_server.enqueue(GEMINI, gemini_ok("hello"))
    gemini_call(provider_server)
    sent = provider_server.last
    assert sent.path == f"/v1beta/models/{GEMINI}:generateContent"
    assert sent.query == {}
    assert sent.header("x-goog-api-key") == "test-key"
    assert sent.header("authorization") is None

    # With the bare root as api_base there is no version segment at all.
    litellm.completion(
        model=f"gemini/{GEMINI}", messages=USER, api_base=provider_server.url, **NO_RETRY
    )
    assert provider_server.last.path == f"/models/{GEMINI}:generateContent"


def test_gemini_ok_with_thoughts(provider_server: ProviderServer) -> None:
    provider_server.enqueue(
        GEMINI, gemini_ok("the answer", 100, thought_text="let me think", candidates_tokens=2)
    )
    response = gemini_call(provider_server)
    choice = response.choices[0]
    assert choice.message.content == "the answer"
    assert choice.message.reasoning_content == "let me think"  # thought parts are split off
    assert choice.finish_reason == "stop"
    assert choice.provider_specific_fields == {"native_finish_reason": "STOP"}
    usage = response.usage
    # total != prompt + candidates, so litellm treats thoughts as extra and ADDS them:
    assert usage.completion_tokens == 2 + 100
    assert usage.completion_tokens_details.reasoning_tokens == 100
    assert usage.completion_tokens_details.text_tokens == 2
    assert usage.prompt_tokens == 12
    assert usage.total_tokens == 12 + 2 + 100


def test_gemini_request_mapping(provider_server: ProviderServer) -> None:
    """thinking -> generationConfig.thinkingConfig; max_tokens -> max_output_tokens (snake
    case on the wire); system message -> top-level system_instruction (snake case)."""
    provider_server.enqueue(GEMINI, gemini_ok("x"))
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    gemini_call(
        provider_server,
        messages,
        thinking={"type": "enabled", "budget_tokens": 1024},
        max_tokens=2000,
        temperature=0.2,
    )
    body = provider_server.last.body
    assert body["system_instruction"] == {"parts": [{"text": "be brief"}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    raw_config = body["generationConfig"]
    assert raw_config["max_output_tokens"] == 2000  # snake_case as sent
    assert raw_config["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 1024}
    config = gemini_generation_config(provider_server.last)
    assert config["maxOutputTokens"] == 2000
    assert config["temperature"] == 0.2


@pytest.mark.parametrize(("effort", "budget"), [("low", 1024), ("medium", 2048), ("high", 4096)])
def test_gemini_reasoning_effort_maps_to_budget(
    provider_server: ProviderServer, effort: str, budget: int
) -> None:
    provider_server.enqueue(GEMINI, gemini_ok("x"))
    gemini_call(provider_server, reasoning_effort=effort)
    thinking = gemini_generation_config(provider_server.last)["thinkingConfig"]
    assert thinking == {"thinkingBudget": budget, "includeThoughts": True}


def test_gemini_reasoning_effort_none_sends_budget_zero_and_pro_rejects_it(
    provider_server: ProviderServer,
) -> None:
    exc = raised(gemini_call, provider_server, reasoning_effort="none")
    thinking = gemini_generation_config(provider_server.last)["thinkingConfig"]
    assert thinking == {"thinkingBudget": 0, "includeThoughts": False}
    assert isinstance(exc, litellm.BadRequestError)
    assert "This model only works in thinking mode" in str(exc)


def test_gemini_thinking_budget_zero_is_rejected(provider_server: ProviderServer) -> None:
    provider_server.validate_gemini = False  # the scripted reply, not the validator
    provider_server.enqueue(GEMINI, gemini_400_budget_zero())
    exc = raised(gemini_call, provider_server, thinking={"type": "enabled", "budget_tokens": 0})
    assert gemini_generation_config(provider_server.last)["thinkingConfig"] == {"thinkingBudget": 0}
    assert isinstance(exc, litellm.BadRequestError)
    assert exc.status_code == 400
    assert "Budget 0 is invalid. This model only works in thinking mode." in exc.message


def test_gemini_max_tokens_no_parts(provider_server: ProviderServer) -> None:
    """Thinking ate the whole budget: HTTP 200, content None, finish_reason "length"."""
    provider_server.enqueue(GEMINI, gemini_max_tokens_no_parts(1000))
    response = gemini_call(provider_server, max_tokens=1000)
    choice = response.choices[0]
    assert choice.message.content is None
    assert choice.finish_reason == "length"
    assert choice.provider_specific_fields == {"native_finish_reason": "MAX_TOKENS"}
    assert response.usage.completion_tokens == 1000  # all of it thoughts
    assert response.usage.completion_tokens_details.reasoning_tokens == 1000
    assert response.usage.completion_tokens_details.text_tokens == 0


def test_gemini_max_tokens_partial(provider_server: ProviderServer) -> None:
    provider_server.enqueue(GEMINI, gemini_max_tokens_partial("The verdict is", 500))
    response = gemini_call(provider_server)
    assert response.choices[0].message.content == "The verdict is"
    assert response.choices[0].finish_reason == "length"
    assert response.usage.completion_tokens == 3 + 500


def test_gemini_safety_block(provider_server: ProviderServer) -> None:
    """finishReason SAFETY -> content None, "content_filter"; usage drops thoughtsTokenCount
    (completion_tokens = candidatesTokenCount only) and native_finish_reason is not kept."""
    reply = gemini_safety()
    reply.body["usageMetadata"]["thoughtsTokenCount"] = 300
    reply.body["usageMetadata"]["totalTokenCount"] += 300
    provider_server.enqueue(GEMINI, reply)
    response = gemini_call(provider_server)
    choice = response.choices[0]
    assert choice.message.content is None
    assert choice.finish_reason == "content_filter"
    assert getattr(choice, "provider_specific_fields", None) is None
    assert response.usage.completion_tokens == 0  # the 300 billed thought tokens are gone
    assert response.usage.completion_tokens_details is None
    assert response.usage.total_tokens == 752 + 300


def test_gemini_prompt_blocked(provider_server: ProviderServer) -> None:
    provider_server.enqueue(GEMINI, gemini_prompt_blocked("PROHIBITED_CONTENT"))
    response = gemini_call(provider_server)
    assert response.choices[0].message.content is None
    assert response.choices[0].finish_reason == "content_filter"
    assert response.usage.prompt_tokens == 40


def test_gemini_429_retry_delay_only_in_message(provider_server: ProviderServer) -> None:
    provider_server.enqueue(GEMINI, gemini_429_retry_info("37s"))
    exc = raised(gemini_call, provider_server)
    assert isinstance(exc, litellm.RateLimitError)
    assert exc.status_code == 429
    # The Google JSON body is embedded (as text) in the message, retryDelay included:
    assert '"retryDelay": "37s"' in exc.message
    assert '"retryDelay": "37s"' in str(exc)
    assert "RESOURCE_EXHAUSTED" in exc.message
    body = json.loads(exc.message[exc.message.index("{") :])
    retry = [d for d in body["error"]["details"] if d["@type"].endswith("RetryInfo")]
    assert retry == [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]
    # exc.response is a stub litellm builds (no body, no headers); the real headers are
    # on exc.litellm_response_headers, and Gemini sends no Retry-After.
    assert exc.response.text == ""
    assert exc.response.headers.get("retry-after") is None
    real_headers = getattr(exc, "litellm_response_headers", None)
    assert real_headers is not None
    assert real_headers.get("retry-after") is None
    assert getattr(exc, "body", None) is None


def test_gemini_429_async_same_as_sync(provider_server: ProviderServer) -> None:
    provider_server.enqueue(GEMINI, gemini_429_retry_info("12s"))

    async def call() -> BaseException:
        try:
            await litellm.acompletion(
                model=f"gemini/{GEMINI}",
                messages=USER,
                api_base=provider_server.gemini_base,
                **NO_RETRY,
            )
        except Exception as exc:
            return exc
        raise AssertionError("expected a failure")

    exc = asyncio.run(call())
    assert isinstance(exc, litellm.RateLimitError)
    assert '"retryDelay": "12s"' in str(exc)


def test_gemini_429_with_403_in_its_text_becomes_bad_request(
    provider_server: ProviderServer,
) -> None:
    """litellm's Vertex/Gemini mapping tests `"403" in error_str` BEFORE the 429 checks
    (litellm_core_utils/exception_mapping_utils.py, _map_vertex_exception). Real Gemini
    429 messages end "Please retry in 14.403217s." - random digits - so some 429s surface
    as BadRequestError with status_code 403."""
    provider_server.enqueue(GEMINI, gemini_429_retry_info("14s", retry_in="14.403217s"))
    exc = raised(gemini_call, provider_server)
    assert isinstance(exc, litellm.BadRequestError)
    assert not isinstance(exc, litellm.RateLimitError)
    assert exc.status_code == 403
    assert "RESOURCE_EXHAUSTED" in str(exc)


def test_gemini_empty_assistant_turn(provider_server: ProviderServer) -> None:
    """An assistant "" is sent as {"text": ""} (Gemini: 400); an assistant None is dropped,
    leaving two user turns back to back."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "b"},
    ]
    exc = raised(gemini_call, provider_server, messages)
    assert gemini_empty_text_parts(provider_server.last) == [(1, 0)]
    assert provider_server.last.body["contents"][1] == {"role": "model", "parts": [{"text": ""}]}
    assert isinstance(exc, litellm.BadRequestError)
    assert "required oneof field 'data' must have one initialized field" in str(exc)

    provider_server.enqueue(GEMINI, gemini_ok("x"))
    messages[1] = {"role": "assistant", "content": None}
    gemini_call(provider_server, messages)
    assert provider_server.last.body["contents"] == [
        {"role": "user", "parts": [{"text": "a"}]},
        {"role": "user", "parts": [{"text": "b"}]},
    ]


def test_gemini_empty_part_scripted(provider_server: ProviderServer) -> None:
    provider_server.enqueue(GEMINI, gemini_400_empty_part(3, 0))
    exc = raised(gemini_call, provider_server)
    assert isinstance(exc, litellm.BadRequestError)
    assert exc.status_code == 400
    assert "contents[3].parts[0].data" in exc.message


def test_gemini_bad_key_is_http_400_but_authentication_error(
    provider_server: ProviderServer,
) -> None:
    provider_server.enqueue(GEMINI, gemini_400_bad_key())
    exc = raised(gemini_call, provider_server)
    assert isinstance(exc, litellm.AuthenticationError)  # matched on "API key not valid."
    assert exc.status_code == 401  # although the HTTP status was 400
    assert "API_KEY_INVALID" in str(exc)
    assert "test-key" not in str(exc)  # Gemini never echoes the key


def test_gemini_json_schema_passthrough(provider_server: ProviderServer) -> None:
    """gemini-2.x: response_format json_schema -> response_mime_type + response_json_schema
    (snake case), the schema verbatim: $defs/$ref and additionalProperties kept, "strict"
    removed, nothing inlined."""
    schema = {
        "type": "object",
        "properties": {"verdict": {"$ref": "#/$defs/Verdict"}},
        "required": ["verdict"],
        "additionalProperties": False,
        "$defs": {"Verdict": {"type": "string", "enum": ["yes", "no"]}},
    }
    provider_server.enqueue(GEMINI, gemini_ok('{"verdict": "yes"}'))
    response = gemini_call(
        provider_server,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "v", "strict": True, "schema": schema},
        },
    )
    raw_config = provider_server.last.body["generationConfig"]
    assert raw_config["response_mime_type"] == "application/json"
    assert raw_config["response_json_schema"] == schema
    assert "responseSchema" not in raw_config and "response_schema" not in raw_config
    assert json.loads(response.choices[0].message.content) == {"verdict": "yes"}


def test_gemini_pydantic_schema_keeps_description_beside_ref(
    provider_server: ProviderServer,
) -> None:
    """A pydantic response_format is sent as model_json_schema(): a described sub-model is
    {"$ref": ..., "description": ...}, which the documented Gemini rule forbids."""

    class Inner(BaseModel):
        score: int

    class Outer(BaseModel):
        verdict: Inner = Field(description="the verdict")

    exc = raised(gemini_call, provider_server, response_format=Outer)
    schema = gemini_generation_config(provider_server.last)["responseJsonSchema"]
    assert schema["properties"]["verdict"] == {
        "$ref": "#/$defs/Inner",
        "description": "the verdict",
    }
    assert schema_ref_sibling_paths(schema) == ["properties.verdict"]
    assert isinstance(exc, litellm.BadRequestError)
    assert "can only contain properties starting with '$' when $ref is present" in str(exc)


# ======================================================================================
# OpenAI (litellm provider "openai/")
# ======================================================================================


def test_openai_ok_reasoning_tokens(provider_server: ProviderServer) -> None:
    provider_server.enqueue("gpt-5", openai_ok("fine", reasoning_tokens=64, model="gpt-5"))
    response = chat_call(
        provider_server, "openai/gpt-5", reasoning_effort="low", max_completion_tokens=300
    )
    body = provider_server.last.body
    assert body["reasoning_effort"] == "low"
    assert body["max_completion_tokens"] == 300
    assert provider_server.last.header("authorization") == "Bearer test-key"
    assert response.choices[0].message.content == "fine"
    assert response.usage.completion_tokens == 1 + 64  # reasoning included, as OpenAI reports
    assert response.usage.completion_tokens_details.reasoning_tokens == 64
    # A response whose logprobs is null yields a Choices WITHOUT the attribute:
    assert not hasattr(response.choices[0], "logprobs")


def test_openai_length(provider_server: ProviderServer) -> None:
    provider_server.enqueue("gpt-4o", openai_length("cut"))
    response = chat_call(provider_server, "openai/gpt-4o", max_tokens=5)
    assert provider_server.last.body["max_tokens"] == 5
    assert response.choices[0].finish_reason == "length"
    assert response.choices[0].message.content == "cut"


def test_openai_429_rate_limit_headers(provider_server: ProviderServer) -> None:
    provider_server.enqueue("gpt-4o", openai_429_rate_limit("7"))
    exc = raised(chat_call, provider_server, "openai/gpt-4o")
    assert isinstance(exc, litellm.RateLimitError)
    assert exc.status_code == 429
    assert "Rate limit reached for gpt-4o" in exc.message
    body: dict[str, Any] = exc.body  # type: ignore[assignment]  # the parsed OpenAI error object
    assert body["code"] == "rate_limit_exceeded"
    assert body["type"] == "tokens"
    assert exc.response.headers.get("retry-after") is None  # a stub response again
    headers = getattr(exc, "litellm_response_headers", None)
    assert headers is not None
    assert headers["retry-after"] == "7"
    assert headers["x-ratelimit-reset-tokens"] == "644ms"
    assert headers["x-ratelimit-remaining-tokens"] == "0"


def test_openai_429_insufficient_quota_same_class(provider_server: ProviderServer) -> None:
    """Out of credit is the SAME litellm class as a rate limit; only exc.body (or the
    message) tells them apart."""
    provider_server.enqueue("gpt-4o", openai_429_insufficient_quota())
    exc = raised(chat_call, provider_server, "openai/gpt-4o")
    assert type(exc) is litellm.RateLimitError
    assert exc.status_code == 429
    body: dict[str, Any] = exc.body  # type: ignore[assignment]
    assert body["code"] == "insufficient_quota"
    assert body["type"] == "insufficient_quota"
    assert (
        "You exceeded your current quota, please check your plan and billing details" in exc.message
    )
    assert getattr(exc, "litellm_response_headers", {}).get("retry-after") is None


def test_openai_401_masked_key(provider_server: ProviderServer) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    provider_server.enqueue("gpt-4o", openai_401_echo_key(key))
    exc = raised(chat_call, provider_server, "openai/gpt-4o", api_key=key)
    assert isinstance(exc, litellm.AuthenticationError)
    assert exc.status_code == 401
    assert openai_mask_key(key) in str(exc)
    assert openai_mask_key(key) == "sk-proj-" + "*" * (len(key) - 12) + "6789"
    assert key not in str(exc)


def test_openai_401_whole_key_is_not_redacted(provider_server: ProviderServer) -> None:
    """When a server echoes the whole key, litellm passes it through unredacted."""
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    provider_server.enqueue("gpt-4o", openai_401_echo_key_whole(key))
    exc = raised(chat_call, provider_server, "openai/gpt-4o", api_key=key)
    assert isinstance(exc, litellm.AuthenticationError)
    assert key in exc.message
    assert key in str(exc)
    assert key in repr(exc)


def test_openai_json_schema_strict_passthrough(provider_server: ProviderServer) -> None:
    response_format = {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"score": {"type": "integer"}},
                "required": ["score"],
                "additionalProperties": False,
            },
        },
    }
    provider_server.enqueue("gpt-4o", openai_ok('{"score": 3}'))
    chat_call(provider_server, "openai/gpt-4o", response_format=response_format)
    assert provider_server.last.body["response_format"] == response_format


def test_openai_stream_through_stand_in(provider_server: ProviderServer) -> None:
    provider_server.enqueue("gpt-4o", openai_ok("streamed words", prompt_tokens=5))
    stream = chat_call(
        provider_server, "openai/gpt-4o", stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed words"
    assert provider_server.last.body["stream"] is True


# ======================================================================================
# vLLM (litellm provider "hosted_vllm/")
# ======================================================================================

QWEN = "Qwen/Qwen3-8B"


def test_vllm_chat_template_kwargs_top_level_and_extra_body(
    provider_server: ProviderServer,
) -> None:
    """Both a top-level kwarg and extra_body land as top-level body fields."""
    chat_call(
        provider_server, f"hosted_vllm/{QWEN}", chat_template_kwargs={"enable_thinking": False}
    )
    first = provider_server.last.body
    assert first["model"] == QWEN
    assert first["chat_template_kwargs"] == {"enable_thinking": False}
    assert "extra_body" not in first

    chat_call(
        provider_server,
        f"hosted_vllm/{QWEN}",
        extra_body={"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20},
    )
    second = provider_server.last.body
    assert second["chat_template_kwargs"] == {"enable_thinking": False}
    assert second["top_k"] == 20
    assert "extra_body" not in second


def test_vllm_thinking_param_becomes_reasoning_effort(provider_server: ProviderServer) -> None:
    chat_call(
        provider_server, f"hosted_vllm/{QWEN}", thinking={"type": "enabled", "budget_tokens": 1024}
    )
    body = provider_server.last.body
    assert body["reasoning_effort"] == "low"
    assert "thinking" not in body and "chat_template_kwargs" not in body


def test_vllm_logprobs_and_reasoning_content(provider_server: ProviderServer) -> None:
    provider_server.enqueue(
        QWEN,
        openai_ok(
            "yes",
            logprobs=[("yes", -0.1, [("yes", -0.1), ("no", -2.4)])],
            reasoning_content="hmm",
            model=QWEN,
        ),
    )
    response = chat_call(provider_server, f"hosted_vllm/{QWEN}", logprobs=True, top_logprobs=2)
    assert provider_server.last.body["logprobs"] is True
    assert provider_server.last.body["top_logprobs"] == 2
    choice = response.choices[0]
    assert choice.message.reasoning_content == "hmm"
    token = choice.logprobs.content[0]
    assert token.token == "yes"
    assert [(t.token, t.logprob) for t in token.top_logprobs] == [("yes", -0.1), ("no", -2.4)]


def test_vllm_json_schema_passthrough(provider_server: ProviderServer) -> None:
    response_format = {
        "type": "json_schema",
        "json_schema": {
            "name": "v",
            "strict": True,
            "schema": {"type": "object", "properties": {}},
        },
    }
    chat_call(provider_server, f"hosted_vllm/{QWEN}", response_format=response_format)
    assert provider_server.last.body["response_format"] == response_format  # strict kept


@pytest.mark.parametrize("legacy", [False, True])
def test_vllm_error_bodies(provider_server: ProviderServer, legacy: bool) -> None:
    provider_server.enqueue(QWEN, vllm_max_logprobs_error(25, legacy=legacy))
    exc = raised(chat_call, provider_server, f"hosted_vllm/{QWEN}", logprobs=True, top_logprobs=25)
    assert isinstance(exc, litellm.BadRequestError)
    assert exc.status_code == 400
    assert exc.llm_provider == "hosted_vllm"
    assert "Requested sample logprobs of 25, which is greater than max allowed: 20" in exc.message
    assert ('"object": "error"' in exc.message) is legacy  # the raw body is in the message


def test_vllm_5xx_error(provider_server: ProviderServer) -> None:
    provider_server.enqueue(QWEN, vllm_error("engine dead", 500, type_="InternalServerError"))
    exc = raised(chat_call, provider_server, f"hosted_vllm/{QWEN}")
    assert isinstance(exc, litellm.InternalServerError)
    assert "engine dead" in str(exc)


@pytest.mark.parametrize("provider", ["hosted_vllm", "openai"])
def test_embeddings(provider_server: ProviderServer, provider: str) -> None:
    model = "Qwen/Qwen3-Embedding-0.6B"
    provider_server.enqueue(model, embeddings_ok([[0.1, 0.2], [0.3, 0.4]]))
    response = litellm.embedding(
        model=f"{provider}/{model}",
        input=["Instruct: judge\nQuery:a fox", "a fox on a stone"],
        api_base=provider_server.openai_base,
        **NO_RETRY,
    )
    sent = provider_server.last
    assert sent.path == "/v1/embeddings"
    assert sent.body["input"] == ["Instruct: judge\nQuery:a fox", "a fox on a stone"]
    assert [item["embedding"] for item in response.data] == [[0.1, 0.2], [0.3, 0.4]]
    assert response.usage.prompt_tokens == 8


# ======================================================================================
# The stand-in itself
# ======================================================================================


def test_queue_order_wildcard_and_default(provider_server: ProviderServer) -> None:
    provider_server.enqueue("*", openai_ok("from wildcard"))
    provider_server.enqueue(
        "m1", openai_ok("first"), lambda req: openai_ok(f"saw {req.body['model']}")
    )
    assert provider_server.pending() == 3
    said = [chat_call(provider_server, "openai/m1").choices[0].message.content for _ in range(4)]
    assert said == ["first", "saw m1", "from wildcard", "ok"]
    assert provider_server.pending() == 0
    assert [r.model for r in provider_server.requests_for("chat")] == ["m1"] * 4


def test_custom_default(provider_server: ProviderServer) -> None:
    original = provider_server.default_chat
    provider_server.default_chat = lambda body: {
        **openai_ok(json.dumps({"n": len(body["messages"])})).body
    }
    try:
        response = chat_call(provider_server, "openai/any")
    finally:
        provider_server.default_chat = original
    assert json.loads(response.choices[0].message.content) == {"n": 1}


def test_validation_does_not_consume_queue(provider_server: ProviderServer) -> None:
    provider_server.enqueue(GEMINI, gemini_ok("kept"))
    raised(gemini_call, provider_server, thinking={"type": "enabled", "budget_tokens": 0})
    assert provider_server.pending(GEMINI) == 1
    assert gemini_call(provider_server).choices[0].message.content == "kept"


def test_unknown_route_and_raw_reply(provider_server: ProviderServer) -> None:
    import httpx

    response = httpx.get(provider_server.url + "/nope")
    assert response.status_code == 404
    assert provider_server.last.kind == "other"
    provider_server.enqueue(
        "m", Reply(status=502, body="<html>bad gateway</html>", headers={"x-a": "1"})
    )
    response = httpx.post(
        provider_server.openai_base + "/chat/completions", json={"model": "m", "messages": []}
    )
    assert (response.status_code, response.text, response.headers["x-a"]) == (
        502,
        "<html>bad gateway</html>",
        "1",
    )
