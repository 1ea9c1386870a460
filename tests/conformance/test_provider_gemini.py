"""What titjudge makes of each documented Gemini shape, through its own litellm backend and
call layer against the loopback stand-in (provider_server.py, where each shape's source is
cited on its builder).

The assertions are on titjudge's behaviour: what it sends, the `Generation` it reads, how it
classifies an error, the wait it takes and the record it writes. Where that passes through
litellm's own mapping (a `thinking` kwarg becoming `thinkingConfig`, thought parts split off
the answer), `relies_on` names the litellm behaviour, so an upgrade that drops it fails with
the behaviour and the installed version.
"""

from __future__ import annotations

import json
import time

import pytest
from doubles.relies import installed, relies_on
from provider_calls import KEY, ModelLayer
from provider_server import (
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
    schema_ref_sibling_paths,
)
from pydantic import BaseModel, Field

from titjudge.errors import ConfigError
from titjudge.models.calls.structured import response_schema
from titjudge.models.core.base import (
    GenerateRequest,
    PermanentError,
    QuotaExhaustedError,
    TransientError,
)

PRO = "gemini-2.5-pro"
GEMINI = f"gemini/{PRO}"


def test_gemini_url_and_key_header(layer: ModelLayer) -> None:
    """api_base=B -> POST {B}/models/{model}:generateContent; the key from `api_key_env` in
    x-goog-api-key, never in the URL."""
    layer.generate(GEMINI)
    sent = layer.server.last
    relies_on(
        "posting a gemini/ call to {api_base}/models/{model}:generateContent",
        sent.path == f"/v1beta/models/{PRO}:generateContent",
        sent.path,
    )
    assert sent.query == {}
    assert sent.header("x-goog-api-key") == KEY
    assert sent.header("authorization") is None

    layer.generate(GEMINI, api_base=layer.server.url)  # the bare root: no version segment
    relies_on(
        "appending /models/{model}:generateContent to a bare api_base",
        layer.server.last.path == f"/models/{PRO}:generateContent",
        layer.server.last.path,
    )


def test_gemini_answer_is_kept_apart_from_its_thoughts(layer: ModelLayer) -> None:
    """The answer is the text without the thought parts; the thoughts count as output
    (billed) and as thinking tokens."""
    layer.server.enqueue(
        PRO, gemini_ok("the answer", 100, thought_text="let me think", candidates_tokens=2)
    )
    gen = layer.generate(GEMINI)
    relies_on("splitting Gemini's thought parts off the answer", gen.text == "the answer", gen.text)
    assert gen.finish_reason == "stop"
    assert gen.tokens_in == 12
    relies_on(
        "counting thoughtsTokenCount into completion_tokens and reasoning_tokens",
        (gen.tokens_out, gen.thinking_tokens) == (2 + 100, 100),
        (gen.tokens_out, gen.thinking_tokens),
    )
    layer.server.enqueue(
        PRO, gemini_ok("the answer", 100, thought_text="let me think", candidates_tokens=2)
    )
    result = layer.text(GEMINI)
    assert result.ok and result.value == "the answer"
    assert (result.tokens_out, result.thinking_tokens) == (102, 100)


@pytest.mark.parametrize("budget", [128, 1024, 32_768])
def test_gemini_thinking_budget_and_output_cap_sent(layer: ModelLayer, budget: int) -> None:
    """`thinking: {budget: N}` -> thinkingBudget N and an output cap of max_tokens + N (the
    answer keeps its own budget); the system prompt is Gemini's system_instruction."""
    request = GenerateRequest(prompt="hi", system="be brief", max_tokens=2000, temperature=0.2)
    layer.generate(GEMINI, request, thinking={"budget": budget})
    body = layer.server.last.body
    config = gemini_generation_config(layer.server.last)
    relies_on(
        "sending thinking.budget_tokens as generationConfig.thinkingConfig.thinkingBudget",
        (config.get("thinkingConfig") or {}).get("thinkingBudget") == budget,
        config,
    )
    relies_on(
        "sending max_tokens as generationConfig.maxOutputTokens",
        config.get("maxOutputTokens") == 2000 + budget,
        config,
    )
    assert config["temperature"] == 0.2
    relies_on(
        "sending the system message as system_instruction",
        body.get("system_instruction") == {"parts": [{"text": "be brief"}]},
        body,
    )
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


@pytest.mark.parametrize("thinking", ["off", "low", 0, {"budget": 64}])
def test_gemini_pro_thinking_it_would_reject_is_a_config_error(
    layer: ModelLayer, thinking: object
) -> None:
    """2.5 Pro cannot stop thinking (a zero budget is a 400, "This model only works in
    thinking mode") and takes a budget, not an effort: refused before anything is sent."""
    with pytest.raises(ConfigError, match=PRO):
        layer.backend(GEMINI, thinking=thinking)
    assert layer.server.requests == []


def test_gemini_flash_thinking_off_is_sent_as_budget_zero(layer: ModelLayer) -> None:
    layer.server.enqueue("gemini-2.5-flash", gemini_ok("quick", model="gemini-2.5-flash"))
    gen = layer.generate("gemini/gemini-2.5-flash", thinking="off")
    config = gemini_generation_config(layer.server.last)
    relies_on(
        "sending a zero thinking budget as thinkingConfig.thinkingBudget 0",
        (config.get("thinkingConfig") or {}).get("thinkingBudget") == 0,
        config,
    )
    assert config["maxOutputTokens"] == 512  # nothing reserved
    assert gen.text == "quick"


def test_gemini_budget_zero_rejection_is_a_permanent_failure(layer: ModelLayer) -> None:
    layer.server.validate_gemini = False  # the scripted reply, not the validator
    layer.server.enqueue(PRO, gemini_400_budget_zero())
    error = layer.failure(GEMINI)
    assert isinstance(error, PermanentError), f"{error!r} ({installed()})"
    assert "Budget 0 is invalid. This model only works in thinking mode." in str(error)


def test_gemini_thinking_that_ate_the_cap_is_a_truncation_record(layer: ModelLayer) -> None:
    """MAX_TOKENS with no parts: no answer at all, every output token a thought."""
    layer.server.enqueue(PRO, gemini_max_tokens_no_parts(640))
    gen = layer.generate(GEMINI)
    assert (gen.text, gen.finish_reason) == ("", "length")
    assert (gen.tokens_out, gen.thinking_tokens, gen.max_tokens_sent) == (640, 640, 512 + 128)

    layer.server.enqueue(PRO, gemini_max_tokens_no_parts(640))
    result = layer.text(GEMINI)
    assert not result.ok and result.value is None
    assert result.error == (
        "truncated: the reply stopped at the token limit (finish_reason=length; answer 0 tokens "
        "of max_tokens 512, thinking 640 tokens, cap sent 640); raise max_tokens, or the "
        "thinking budget if thinking used the room"
    )
    assert (result.tokens_out, result.thinking_tokens, result.attempts) == (640, 640, 1)


def test_gemini_cut_answer_is_a_truncation_record(layer: ModelLayer) -> None:
    layer.server.enqueue(PRO, gemini_max_tokens_partial("The verdict is", 500))
    gen = layer.generate(GEMINI)
    assert (gen.text, gen.finish_reason) == ("The verdict is", "length")
    assert (gen.tokens_out, gen.thinking_tokens) == (3 + 500, 500)
    layer.server.enqueue(PRO, gemini_max_tokens_partial("The verdict is", 500))
    result = layer.text(GEMINI)
    assert not result.ok and result.raw == "The verdict is"
    assert result.error is not None and "answer 3 tokens of max_tokens 512" in result.error


def test_gemini_safety_block_is_a_blocked_record(layer: ModelLayer) -> None:
    """finishReason SAFETY, no content: a failure naming the block, its prompt tokens kept."""
    reply = gemini_safety()
    reply.body["usageMetadata"]["thoughtsTokenCount"] = 300
    reply.body["usageMetadata"]["totalTokenCount"] += 300
    layer.server.enqueue(PRO, reply)
    gen = layer.generate(GEMINI)
    assert (gen.text, gen.finish_reason, gen.tokens_in) == ("", "content_filter", 752)
    layer.server.enqueue(PRO, reply)
    result = layer.text(GEMINI)
    assert not result.ok and result.attempts == 1
    assert result.error == "blocked: the provider withheld the reply (finish_reason=content_filter)"
    assert result.tokens_in == 752


def test_gemini_blocked_prompt_is_a_blocked_record(layer: ModelLayer) -> None:
    layer.server.enqueue(PRO, gemini_prompt_blocked("PROHIBITED_CONTENT"))
    result = layer.text(GEMINI)
    assert not result.ok and result.tokens_in == 40
    assert result.error == "blocked: the provider withheld the reply (finish_reason=content_filter)"


@pytest.mark.parametrize("retry_in", [None, "14.403217s"])
def test_gemini_429_is_a_rate_limit_with_the_body_s_retry_delay(
    layer: ModelLayer, retry_in: str | None
) -> None:
    """Gemini sends no Retry-After: the wait is RetryInfo.retryDelay in the body. A message
    holding "403" ("Please retry in 14.403217s.") is still a rate limit (litellm 1.106 and
    earlier mapped it to a 403 BadRequestError; titjudge goes by the body)."""
    layer.server.enqueue(PRO, gemini_429_retry_info("37s", retry_in=retry_in))
    error = layer.failure(GEMINI)
    assert isinstance(error, TransientError), f"{error!r} ({installed()})"
    assert not isinstance(error, QuotaExhaustedError)
    assert (error.rate_limited, error.retry_after) == (True, 37.0), installed()
    assert "RESOURCE_EXHAUSTED" in str(error)


def test_gemini_429_waits_the_retry_delay_then_answers(layer: ModelLayer) -> None:
    layer.server.enqueue(PRO, gemini_429_retry_info("1s", retry_in="1.403217s"), gemini_ok("back"))
    started = time.monotonic()
    result = layer.text(GEMINI)  # backoff 0.01 s: only the retryDelay can make the wait
    assert result.ok and result.value == "back" and result.attempts == 2
    assert time.monotonic() - started >= 0.95
    assert len(layer.server.requests) == 2


def test_an_empty_reply_is_not_reasked_so_no_empty_turn_is_sent(layer: ModelLayer) -> None:
    """Gemini rejects an empty text part (400, "required oneof field 'data'..."), which a
    re-ask quoting an empty reply would send: an empty reply fails at once instead."""

    class Verdict(BaseModel):
        score: int

    layer.server.enqueue(PRO, gemini_ok(""))
    result = layer.structured(GEMINI, Verdict)
    assert not result.ok and result.error == "empty reply (finish_reason=stop)"
    assert not result.reasked and len(layer.server.requests) == 1

    layer.server.enqueue(PRO, gemini_ok("no json"), gemini_ok('{"score": 3}'))
    result = layer.structured(GEMINI, Verdict, GenerateRequest(prompt="rate it"))
    assert result.ok and result.reasked and result.value == Verdict(score=3)
    reask = layer.server.last
    assert gemini_empty_text_parts(reask) == []
    relies_on(
        "sending an assistant turn as a Gemini 'model' content",
        [c["role"] for c in reask.body["contents"]] == ["user", "model", "user"],
        reask.body["contents"],
    )
    assert reask.body["contents"][1]["parts"] == [{"text": "no json"}]


def test_gemini_empty_part_rejection_is_a_permanent_failure(layer: ModelLayer) -> None:
    layer.server.enqueue(PRO, gemini_400_empty_part(3, 0))
    result = layer.text(GEMINI)
    assert not result.ok and result.attempts == 1 and len(layer.server.requests) == 1
    assert result.error is not None and "contents[3].parts[0].data" in result.error


def test_gemini_bad_key_http_400_fails_at_once_without_the_key(layer: ModelLayer) -> None:
    layer.server.enqueue(PRO, gemini_400_bad_key())
    error = layer.failure(GEMINI)
    assert isinstance(error, PermanentError), f"{error!r} ({installed()})"
    assert "API_KEY_INVALID" in str(error) and KEY not in str(error)


def test_gemini_json_schema_is_sent_in_gemini_s_subset(layer: ModelLayer) -> None:
    """The schema titjudge builds for Gemini (responseJsonSchema, JSON mime type) is what
    arrives, and the answer is read back as the JSON text."""
    schema = {
        "type": "object",
        "properties": {"verdict": {"$ref": "#/$defs/Verdict"}},
        "required": ["verdict"],
        "additionalProperties": False,
        "$defs": {"Verdict": {"type": "string", "enum": ["yes", "no"]}},
    }
    layer.server.enqueue(PRO, gemini_ok('{"verdict": "yes"}'))
    request = GenerateRequest(prompt="hi", json_schema=schema, schema_name="v")
    backend = layer.backend(GEMINI)
    built = backend.response_format(schema, "v")["json_schema"]["schema"]
    gen = layer.generate(GEMINI, request)
    config = gemini_generation_config(layer.server.last)
    relies_on(
        "sending a json_schema response_format as responseJsonSchema, unchanged",
        config.get("responseJsonSchema") == built,
        config,
    )
    assert config["responseMimeType"] == "application/json"
    assert "responseSchema" not in config
    assert json.loads(gen.text) == {"verdict": "yes"}


def test_gemini_described_sub_model_is_sent_without_ref_siblings(layer: ModelLayer) -> None:
    """pydantic writes a described sub-model as {"$ref", "description"}, which Gemini's
    documented rule forbids (the stand-in answers 400): titjudge sends it inlined."""

    class Inner(BaseModel):
        score: int

    class Outer(BaseModel):
        verdict: Inner = Field(description="the verdict")

    assert schema_ref_sibling_paths(response_schema(Outer)) == ["properties.verdict"]
    layer.server.enqueue(PRO, gemini_ok('{"verdict": {"score": 4}}'))
    result = layer.structured(GEMINI, Outer)
    assert result.ok, result.error
    assert result.value == Outer(verdict=Inner(score=4))
    sent = gemini_generation_config(layer.server.last)["responseJsonSchema"]
    assert schema_ref_sibling_paths(sent) == []
    assert sent["properties"]["verdict"]["description"] == "the verdict"
