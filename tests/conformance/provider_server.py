"""A scripted loopback stand-in for the real providers' wire formats (Gemini, OpenAI, vLLM).

One aiohttp server on 127.0.0.1 (ephemeral port) that answers

- Gemini native ``POST [/v1beta|/v1alpha|/v1]/models/{model}:generateContent``. litellm's
  ``gemini/`` provider, given ``api_base=B``, posts to ``f"{B}/models/{model}:generateContent"``
  with the key in the ``x-goog-api-key`` header (litellm/llms/vertex_ai/vertex_llm_base.py,
  ``_check_custom_proxy``), so pass ``api_base=server.gemini_base`` (``.../v1beta``);
- OpenAI ``POST /v1/chat/completions`` (litellm ``openai/`` and ``hosted_vllm/`` with
  ``api_base=server.openai_base``);
- OpenAI ``POST /v1/embeddings``;
- Anthropic ``POST /v1/messages`` (litellm ``anthropic/`` with ``api_base=server.anthropic_base``;
  shapes and rules in provider_families.py).

With ``validate_families`` on (the default), what each model family's provider refuses (a
temperature on an OpenAI reasoning model, thinkingLevel beside thinkingBudget on Gemini 3,
Claude's thinking rules) gets that provider's 400 without consuming a queued reply
(provider_families.py cites each rule).

Scripted: ``server.enqueue(model, reply, ...)`` queues replies for one model (the name as
it arrives: the path segment for Gemini, the body's ``model`` for OpenAI/vLLM); ``"*"`` is
a queue for any model. An empty queue falls back to ``default_chat`` / ``default_gemini`` /
``default_embeddings``, callables ``(request_json) -> Reply | dict``. A queue entry may
itself be a callable ``(RecordedRequest) -> Reply``.

Every request is recorded (``server.requests``): method, path, query, all headers, the
parsed JSON body and the raw text, so a test can assert what was sent.

The builders below reproduce the documented shapes; each cites where the shape comes
from.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from doubles.loopback import LoopbackThread

# --------------------------------------------------------------------------------------
# Replies and recorded requests
# --------------------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted HTTP answer. ``body`` is JSON-encoded unless it is str/bytes."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering


@dataclass
class RecordedRequest:
    """What the server received, for assertions."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # every header as received (case-preserving keys)
    body: Any  # parsed JSON, or None when the body was not JSON
    raw: str
    kind: str  # "gemini", "chat", "embeddings" or "other"
    model: str | None

    def header(self, name: str) -> str | None:
        """Header value by case-insensitive name."""
        lowered = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lowered:
                return value
        return None


Scenario = Reply | Callable[[RecordedRequest], Reply]
DefaultFn = Callable[[Any], "Reply | dict[str, Any]"]

_GEMINI_PATH = re.compile(
    r"^(?:/(?P<version>v1|v1beta|v1alpha))?/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$"
)
_ids = itertools.count(1)


# --------------------------------------------------------------------------------------
# Gemini builders
# --------------------------------------------------------------------------------------

# Response shape: candidates[].content{role: "model", parts[{text}]}, finishReason,
# index; usageMetadata{promptTokenCount, candidatesTokenCount, totalTokenCount,
# thoughtsTokenCount}; modelVersion; responseId. Source: Gemini API reference
# "GenerateContentResponse" (https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse)
# and the live example quoted at https://docs.apiyi.com/en/api-capabilities/gemini/response-handling.
# Thought parts carry "thought": true (https://ai.google.dev/gemini-api/docs/thinking,
# includeThoughts). Zero-valued counts are omitted (proto3 JSON), e.g. candidatesTokenCount
# when nothing but thoughts was generated (langchain-google#1020: output_tokens 0,
# reasoning 3071).


def _gemini_usage(prompt: int, candidates: int, thoughts: int) -> dict[str, int]:
    usage: dict[str, int] = {"promptTokenCount": prompt}
    if candidates:
        usage["candidatesTokenCount"] = candidates
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    usage["totalTokenCount"] = prompt + candidates + thoughts  # thoughts are NOT in candidates
    return usage


def _gemini_body(candidate: dict[str, Any] | None, usage: dict[str, int], model: str) -> dict:
    body: dict[str, Any] = {}
    if candidate is not None:
        body["candidates"] = [candidate]
    body["usageMetadata"] = usage
    body["modelVersion"] = model
    body["responseId"] = f"resp-{next(_ids)}"
    return body


def gemini_ok(
    text: str,
    thoughts: int = 0,
    *,
    thought_text: str | None = None,
    prompt_tokens: int = 12,
    candidates_tokens: int | None = None,
    finish_reason: str = "STOP",
    model: str = "gemini-2.5-pro",
) -> Reply:
    """A normal answer. ``thoughts`` = thoughtsTokenCount; ``thought_text`` adds a
    ``{"text": ..., "thought": true}`` part first (what includeThoughts returns)."""
    parts: list[dict[str, Any]] = []
    if thought_text is not None:
        parts.append({"text": thought_text, "thought": True})
    parts.append({"text": text})
    cand_tokens = candidates_tokens if candidates_tokens is not None else max(1, len(text.split()))
    candidate = {
        "content": {"parts": parts, "role": "model"},
        "finishReason": finish_reason,
        "index": 0,
    }
    return Reply(
        body=_gemini_body(candidate, _gemini_usage(prompt_tokens, cand_tokens, thoughts), model)
    )


def gemini_max_tokens_no_parts(
    thoughts: int = 1000, *, prompt_tokens: int = 12, model: str = "gemini-2.5-pro"
) -> Reply:
    """Thinking used the whole maxOutputTokens: HTTP 200, a candidate whose content is
    ``{"role": "model"}`` with NO ``parts``, finishReason MAX_TOKENS, no candidatesTokenCount.
    Sources: googleapis/python-genai#811 and #626 (2.5 Pro empty reply when
    max_output_tokens is set), stanford-crfm/helm PR #3804 ("max tokens reached during
    thinking, resulting in a response with no output text"), langchain-google#1020."""
    candidate = {"content": {"role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}
    return Reply(body=_gemini_body(candidate, _gemini_usage(prompt_tokens, 0, thoughts), model))


def gemini_max_tokens_partial(
    text: str, thoughts: int = 500, *, prompt_tokens: int = 12, model: str = "gemini-2.5-pro"
) -> Reply:
    """The answer was cut by maxOutputTokens: parts hold the cut text, finishReason
    MAX_TOKENS (python-genai#782 shows a MAX_TOKENS candidate with a text part)."""
    return gemini_ok(
        text, thoughts, prompt_tokens=prompt_tokens, finish_reason="MAX_TOKENS", model=model
    )


_SAFETY_RATINGS_BLOCKED = [
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "HIGH", "blocked": True},
]


def gemini_safety(*, prompt_tokens: int = 752, model: str = "gemini-2.5-pro") -> Reply:
    """Output blocked by the safety filter: a candidate with finishReason SAFETY,
    safetyRatings (one ``blocked: true``) and no content. Shape quoted in
    CherryHQ/cherry-studio#664 and #696 (real API responses)."""
    candidate = {"finishReason": "SAFETY", "index": 0, "safetyRatings": _SAFETY_RATINGS_BLOCKED}
    return Reply(body=_gemini_body(candidate, _gemini_usage(prompt_tokens, 0, 0), model))


def gemini_prompt_blocked(
    reason: str = "SAFETY", *, prompt_tokens: int = 40, model: str = "gemini-2.5-pro"
) -> Reply:
    """The prompt itself was blocked: no candidates, ``promptFeedback.blockReason``
    (Gemini API reference, PromptFeedback.BlockReason: SAFETY, OTHER, BLOCKLIST,
    PROHIBITED_CONTENT, IMAGE_SAFETY)."""
    body = {
        "promptFeedback": {"blockReason": reason, "safetyRatings": _SAFETY_RATINGS_BLOCKED},
        "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens},
        "modelVersion": model,
    }
    return Reply(body=body)


def _google_error(code: int, status: str, message: str, details: list | None = None) -> dict:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return {"error": error}


GEMINI_QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
)


def gemini_429_retry_info(
    delay: str = "37s",
    *,
    model: str = "gemini-2.5-pro",
    quota_failure: bool = True,
    retry_in: str | None = None,
) -> Reply:
    """429 RESOURCE_EXHAUSTED; the wait is only in the body, as google.rpc.RetryInfo
    ``retryDelay`` (a protobuf Duration string), and there is no Retry-After header.
    Sources: googleapis/python-genai#1875 and #2044 (QuotaFailure + Help + RetryInfo
    "47s"), Aider-AI/aider#3694, dcdpr/jp PR #1061 ("Gemini answers a 429 without a
    Retry-After header"), langchain-google PR #946. The message ends "Please retry in
    <retry_in>." with a fractional duration, e.g. "43.71576202s" (mscraftsman/generative-ai#114);
    ``retry_in`` defaults to ``delay`` plus ".5"."""
    details: list[dict[str, Any]] = []
    if quota_failure:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": model},
                        "quotaValue": "5",
                    }
                ],
            }
        )
    details.append(
        {
            "@type": "type.googleapis.com/google.rpc.Help",
            "links": [
                {
                    "description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                }
            ],
        }
    )
    details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay})
    message = f"{GEMINI_QUOTA_MESSAGE} Please retry in {retry_in or delay[:-1] + '.5s'}."
    return Reply(status=429, body=_google_error(429, "RESOURCE_EXHAUSTED", message, details))


def gemini_400_empty_part(content_index: int = 1, part_index: int = 0) -> Reply:
    """A ``{"text": ""}`` part: 400 INVALID_ARGUMENT. Text from genkit-ai/genkit#3816,
    router-for-me/CLIProxyAPI#1292/#1293 (the message ends with a newline)."""
    message = (
        f"* GenerateContentRequest.contents[{content_index}].parts[{part_index}].data: "
        "required oneof field 'data' must have one initialized field\n"
    )
    return Reply(status=400, body=_google_error(400, "INVALID_ARGUMENT", message))


def gemini_400_budget_zero() -> Reply:
    """thinkingBudget 0 on gemini-2.5-pro. Text as quoted in vercel/ai#8027 and several
    public repos: "Budget 0 is invalid. This model only works in thinking mode."."""
    return Reply(
        status=400,
        body=_google_error(
            400, "INVALID_ARGUMENT", "Budget 0 is invalid. This model only works in thinking mode."
        ),
    )


def gemini_400_bad_key() -> Reply:
    """A bad key is HTTP 400 (not 401) INVALID_ARGUMENT with ErrorInfo API_KEY_INVALID;
    the key is NOT echoed. Body from continuedev/continue#10077, #10290, #9330."""
    message = "API key not valid. Please pass a valid API key."
    details = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        },
        {
            "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
            "locale": "en-US",
            "message": message,
        },
    ]
    return Reply(status=400, body=_google_error(400, "INVALID_ARGUMENT", message, details))


def gemini_401_or_400_bad_key(key: str | None = None) -> Reply:
    """Alias of :func:`gemini_400_bad_key`; Gemini never echoes the key, so ``key`` is
    ignored (accepted for symmetry with :func:`openai_401_echo_key`)."""
    del key
    return gemini_400_bad_key()


# --------------------------------------------------------------------------------------
# OpenAI / vLLM builders
# --------------------------------------------------------------------------------------


def _logprobs_content(logprobs: Sequence[Any]) -> list[dict[str, Any]]:
    """Accepts (token, logprob) / (token, logprob, [(tok, lp), ...]) tuples or ready dicts."""
    content: list[dict[str, Any]] = []
    for item in logprobs:
        if isinstance(item, Mapping):
            content.append(dict(item))
            continue
        token, lp, *rest = item
        top = rest[0] if rest else [(token, lp)]
        content.append(
            {
                "token": token,
                "logprob": lp,
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top
                ],
            }
        )
    return content


def openai_ok(
    text: str | None,
    finish_reason: str = "stop",
    reasoning_tokens: int = 0,
    logprobs: Sequence[Any] | None = None,
    *,
    prompt_tokens: int = 12,
    completion_tokens: int | None = None,
    model: str = "gpt-4o-2024-08-06",
    reasoning_content: str | None = None,
) -> Reply:
    """A chat.completion object (OpenAI API reference, "The chat completion object").
    ``completion_tokens`` includes ``reasoning_tokens`` (completion_tokens_details)."""
    visible = (
        completion_tokens if completion_tokens is not None else max(1, len((text or "").split()))
    )
    total_completion = (
        visible + reasoning_tokens if completion_tokens is None else completion_tokens
    )
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if reasoning_content is not None:  # vLLM --reasoning-parser puts thinking here
        message["reasoning_content"] = reasoning_content
    choice: dict[str, Any] = {
        "index": 0,
        "message": message,
        "logprobs": {"content": _logprobs_content(logprobs)} if logprobs is not None else None,
        "finish_reason": finish_reason,
    }
    body = {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": total_completion,
            "total_tokens": prompt_tokens + total_completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "system_fingerprint": "fp_test",
    }
    return Reply(body=body, headers={"x-request-id": f"req_{next(_ids)}"})


def openai_length(text: str, **kwargs: Any) -> Reply:
    """Cut at max_tokens / max_completion_tokens: ``finish_reason: "length"``."""
    return openai_ok(text, finish_reason="length", **kwargs)


def _openai_error(
    message: str, type_: str | None, code: str | None, param: str | None = None
) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def openai_429_rate_limit(
    retry_after: str | None = "1",
    *,
    model: str = "gpt-4o",
    reset_tokens: str = "644ms",
) -> Reply:
    """Rate limit (retryable). Body as quoted in climb#13 / shell_gpt#653 (type "tokens",
    code "rate_limit_exceeded"); message text as in BuilderIO/micro-agent#86. Headers:
    x-ratelimit-* (OpenAI rate-limits guide, "Rate limits in headers"); ``retry-after``
    (seconds) is read by the openai SDK (and ``retry-after-ms``); set None to omit."""
    message = (
        f"Rate limit reached for {model} in organization org-test on tokens per min (TPM): "
        f"Limit 30000, Used 29937, Requested 385. Please try again in {reset_tokens}. "
        "Visit https://platform.openai.com/account/rate-limits to learn more."
    )
    headers = {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-reset-tokens": reset_tokens,
    }
    if retry_after is not None:
        headers["retry-after"] = retry_after
    return Reply(
        status=429, body=_openai_error(message, "tokens", "rate_limit_exceeded"), headers=headers
    )


OPENAI_QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, read the docs: "
    "https://platform.openai.com/docs/guides/error-codes/api-errors."
)


def openai_429_insufficient_quota() -> Reply:
    """Out of credit: 429 that waiting will not clear. Body from ChatGPTNextWeb/NextChat#3664
    and OpenHands#998 (type and code "insufficient_quota")."""
    return Reply(
        status=429,
        body=_openai_error(OPENAI_QUOTA_MESSAGE, "insufficient_quota", "insufficient_quota"),
    )


def openai_mask_key(key: str) -> str:
    """OpenAI's masking in the 401 message: first 8 characters, one '*' per hidden
    character, last 4 (e.g. ``sk-VKMIs***...***wjh3`` in chatanywhere/GPT_API_free#62,
    ``sk-proj-****...MxYA`` in continuedev/continue#9634). Keys of 12 characters or
    fewer: not observed; returned whole here (an assumption)."""
    if len(key) <= 12:
        return key
    return key[:8] + "*" * (len(key) - 12) + key[-4:]


def openai_401_echo_key(key: str, *, masked: bool = True) -> Reply:
    """401 invalid_api_key. OpenAI echoes the key PARTIALLY masked
    (chatanywhere/GPT_API_free#62, popjane/free_chatgpt_api#3); ``masked=False`` echoes it
    whole, as some proxies / OpenAI-compatible servers do."""
    shown = openai_mask_key(key) if masked else key
    message = (
        f"Incorrect API key provided: {shown}. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    )
    return Reply(
        status=401, body=_openai_error(message, "invalid_request_error", "invalid_api_key")
    )


def openai_401_echo_key_whole(key: str) -> Reply:
    """The unmasked variant of :func:`openai_401_echo_key`."""
    return openai_401_echo_key(key, masked=False)


def vllm_error(
    message: str,
    code: int = 400,
    *,
    type_: str = "BadRequestError",
    param: str | None = None,
    legacy: bool = False,
) -> Reply:
    """vLLM's error body. vLLM >= 0.10.1 nests it like OpenAI:
    ``{"error": {"message", "type", "param", "code"}}`` (vllm PR #22099); older servers
    answer flat ``{"object": "error", "message", "type", "param", "code"}`` (``legacy=True``;
    shape in EleutherAI/lm-evaluation-harness#1735, vllm#12886). ``code`` is an int."""
    if legacy:
        body: dict[str, Any] = {
            "object": "error",
            "message": message,
            "type": type_,
            "param": param,
            "code": code,
        }
    else:
        body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return Reply(status=code, body=body)


def vllm_max_logprobs_error(
    requested: int, max_allowed: int = 20, *, legacy: bool = False
) -> Reply:
    """``top_logprobs`` above ``--max-logprobs`` (default 20). Message from vLLM's
    sampling-params validation ("Requested sample logprobs of N, which is greater than max
    allowed: M"); newer vLLM appends " (parameter=logprobs, value=N)"."""
    message = f"Requested sample logprobs of {requested}, which is greater than max allowed: {max_allowed}"
    return vllm_error(message, 400, legacy=legacy)


def embeddings_ok(
    vectors: Sequence[Sequence[float]],
    *,
    model: str = "Qwen/Qwen3-Embedding-0.6B",
    prompt_tokens: int | None = None,
) -> Reply:
    """/v1/embeddings answer; vLLM's adds ``id``/``created`` to OpenAI's shape (example in
    vllm-project/vllm-ascend#8818: ``{"id": "embd-...", "object": "list", "created",
    "model", "data": [{"index", "object": "embedding", "embedding"}], "usage"}``)."""
    tokens = prompt_tokens if prompt_tokens is not None else 4 * len(vectors)
    body = {
        "id": f"embd-{next(_ids)}",
        "object": "list",
        "created": int(time.time()),
        "model": model,
        "data": [
            {"index": i, "object": "embedding", "embedding": [float(x) for x in vec]}
            for i, vec in enumerate(vectors)
        ],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0},
    }
    return Reply(body=body)


# --------------------------------------------------------------------------------------
# Defaults and request helpers
# --------------------------------------------------------------------------------------


def default_chat(request_json: Any) -> Reply:
    """A plain success that echoes the requested model."""
    model = (
        request_json.get("model", "test-model") if isinstance(request_json, dict) else "test-model"
    )
    return openai_ok("ok", model=model)


def default_gemini(request_json: Any) -> Reply:
    del request_json
    return gemini_ok("ok")


def default_embeddings(request_json: Any) -> Reply:
    """One deterministic 8-dim vector per input string."""
    inputs = request_json.get("input", []) if isinstance(request_json, dict) else []
    if isinstance(inputs, str):
        inputs = [inputs]
    vectors = [[((len(str(s)) + k) % 7) / 7.0 for k in range(8)] for s in inputs]
    model = request_json.get("model", "embed") if isinstance(request_json, dict) else "embed"
    return embeddings_ok(vectors, model=model)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def gemini_generation_config(request: RecordedRequest) -> dict[str, Any]:
    """``generationConfig`` with top-level keys normalised to lowerCamelCase. litellm sends
    some in snake_case (``max_output_tokens``, ``response_mime_type``,
    ``response_json_schema``) and others in camelCase (``thinkingConfig``); Google's JSON
    parser accepts both spellings."""
    config = (
        (request.body or {}).get("generationConfig")
        or (request.body or {}).get("generation_config")
        or {}
    )
    return {_camel(k): v for k, v in config.items()}


def gemini_parts(request: RecordedRequest) -> list[dict[str, Any]]:
    """Every part of every content (system instruction excluded)."""
    return [
        part
        for content in (request.body or {}).get("contents", [])
        for part in content.get("parts", [])
    ]


def gemini_empty_text_parts(request: RecordedRequest) -> list[tuple[int, int]]:
    """(content index, part index) of each part Gemini would reject: ``{"text": ""}``
    or a part with no data field at all."""
    bad = []
    for ci, content in enumerate((request.body or {}).get("contents", [])):
        for pi, part in enumerate(content.get("parts", [])):
            data_keys = set(part) - {
                "thought",
                "thoughtSignature",
                "thought_signature",
                "mediaResolution",
            }
            if not data_keys or ("text" in part and part["text"] == "" and len(data_keys) == 1):
                bad.append((ci, pi))
    return bad


def gemini_400_ref_siblings(path: str) -> Reply:
    """responseJsonSchema with keys beside ``$ref``. The documented rule: "If $ref is set on
    a sub-schema, no other properties, except for than those starting as a $, may be set"
    (GenerationConfig.responseJsonSchema, googleapis java-genai / googleapis dart docs);
    the 400 text is from google-gemini/gemini-cli#4758. (Newer servers word it "If a
    schema node has $ref set, then only description and default can be set alongside
    it", anomalyco/opencode#12295; this stand-in enforces the documented, stricter rule.)"""
    message = f"schema at {path} can only contain properties starting with '$' when $ref is present"
    return Reply(status=400, body=_google_error(400, "INVALID_ARGUMENT", message))


def schema_ref_sibling_paths(schema: Any, path: str = "") -> list[str]:
    """Dotted paths of sub-schemas that carry ``$ref`` plus a key not starting with ``$``."""
    found: list[str] = []
    if isinstance(schema, dict):
        if "$ref" in schema and any(not str(k).startswith("$") for k in schema):
            found.append(path or "<root>")
        for key, value in schema.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                for name, sub in value.items():
                    found += schema_ref_sibling_paths(sub, f"{path}.{key}.{name}".lstrip("."))
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                found += schema_ref_sibling_paths(value, f"{path}.{key}".lstrip("."))
            elif key in ("anyOf", "oneOf", "prefixItems") and isinstance(value, list):
                for i, sub in enumerate(value):
                    found += schema_ref_sibling_paths(sub, f"{path}.{key}.{i}".lstrip("."))
    return found


def _gemini_validation_error(request: RecordedRequest) -> Reply | None:
    """What the real API rejects before generating: empty parts, a zero budget on 2.5 Pro,
    keys beside ``$ref`` in responseJsonSchema."""
    bad = gemini_empty_text_parts(request)
    if bad:
        return gemini_400_empty_part(*bad[0])
    schema = gemini_generation_config(request).get("responseJsonSchema")
    ref_paths = schema_ref_sibling_paths(schema) if schema is not None else []
    if ref_paths:
        return gemini_400_ref_siblings(ref_paths[0])
    budget = (gemini_generation_config(request).get("thinkingConfig") or {}).get("thinkingBudget")
    if budget == 0 and request.model and "2.5-pro" in request.model:
        return gemini_400_budget_zero()
    return None


# --------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------


class ProviderServer(LoopbackThread):
    thread_name = "provider-server"

    """Loopback provider stand-in; see the module docstring.

    ``validate_gemini=True`` makes the Gemini route reject what the real API rejects
    (empty text parts, thinkingBudget 0 on a 2.5-pro model, keys beside ``$ref`` in
    responseJsonSchema) with the documented 400, without consuming a queued reply.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default_chat: DefaultFn = default_chat,
        default_gemini: DefaultFn = default_gemini,
        default_embeddings: DefaultFn = default_embeddings,
        validate_gemini: bool = True,
        validate_families: bool = True,
    ):
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise ValueError("the provider stand-in only listens on loopback")
        self.host = host
        self.port = port
        self.default_chat = default_chat
        self.default_gemini = default_gemini
        self.default_embeddings = default_embeddings
        self.validate_gemini = validate_gemini
        self.validate_families = validate_families
        self.requests: list[RecordedRequest] = []
        self._queues: dict[str, collections.deque[Scenario]] = collections.defaultdict(
            collections.deque
        )
        self._lock = threading.Lock()
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # ---- scripting --------------------------------------------------------------------

    def enqueue(self, model: str, *replies: Scenario) -> None:
        """Queue replies for ``model`` (``"*"``: any model), answered in order."""
        with self._lock:
            self._queues[model].extend(replies)

    def pending(self, model: str | None = None) -> int:
        """Queued replies not yet used (for one model, or all)."""
        with self._lock:
            if model is not None:
                return len(self._queues.get(model, ()))
            return sum(len(q) for q in self._queues.values())

    def reset(self) -> None:
        """Forget queued replies and recorded requests."""
        with self._lock:
            self._queues.clear()
            self.requests.clear()

    def requests_for(
        self, kind: str | None = None, model: str | None = None
    ) -> list[RecordedRequest]:
        with self._lock:
            return [
                r
                for r in self.requests
                if (kind is None or r.kind == kind) and (model is None or r.model == model)
            ]

    @property
    def last(self) -> RecordedRequest:
        """The last request, less titjudge's one look at a server's model list (GET
        .../models), which is not a call."""
        with self._lock:
            calls = [r for r in self.requests if not _listing(r)]
            if not calls:
                raise AssertionError("the provider stand-in has received no request")
            return calls[-1]

    # ---- urls ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Root URL, ``http://127.0.0.1:PORT``."""
        if self._runner is None:
            raise RuntimeError("provider server is not running")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base(self) -> str:
        """api_base for litellm ``openai/`` and ``hosted_vllm/``."""
        return self.url + "/v1"

    @property
    def anthropic_base(self) -> str:
        """api_base for litellm ``anthropic/`` (it appends ``/v1/messages``)."""
        return self.url

    @property
    def gemini_base(self) -> str:
        """api_base for litellm ``gemini/`` (it appends ``/models/{model}:generateContent``)."""
        return self.url + "/v1beta"

    # ---- lifecycle ------------------------------------------------------------------------

    async def astart(self) -> str:
        """Serve from the running loop instead of a thread."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        return self.url

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ---- handling ---------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.text()
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        path = request.path
        kind, model = "other", None
        match = _GEMINI_PATH.match(path)
        if match and request.method == "POST":
            kind, model = "gemini", match["model"]
        elif request.method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            kind = "chat"
        elif request.method == "POST" and path.rstrip("/").endswith("/embeddings"):
            kind = "embeddings"
        elif request.method == "POST" and path.rstrip("/").endswith("/v1/messages"):
            kind = "anthropic"
        if kind in ("chat", "embeddings", "anthropic") and isinstance(body, dict):
            model = body.get("model")
        recorded = RecordedRequest(
            method=request.method,
            path=path,
            query=dict(request.query),
            headers=dict(request.headers),
            body=body,
            raw=raw,
            kind=kind,
            model=model,
        )
        with self._lock:
            self.requests.append(recorded)

        if kind == "other":
            return web.json_response(
                {
                    "error": {
                        "message": f"no route for {request.method} {path}",
                        "type": "not_found",
                    }
                },
                status=404,
            )
        if kind == "gemini" and match and match["method"] != "generateContent":
            return web.json_response(
                _google_error(501, "UNIMPLEMENTED", f"{match['method']} is not scripted here"),
                status=501,
            )
        if kind == "gemini" and self.validate_gemini:
            rejected = _gemini_validation_error(recorded)
            if rejected is not None:
                return self._render(rejected)
        if self.validate_families:
            from provider_families import family_refusal

            refused = family_refusal(recorded)
            if refused is not None:
                return self._render(refused)

        reply = self._next(recorded)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if kind == "chat" and isinstance(body, dict) and body.get("stream") and reply.status == 200:
            return await self._stream_chat(request, reply, body)
        return self._render(reply)

    def _next(self, recorded: RecordedRequest) -> Reply:
        scenario: Scenario | None = None
        with self._lock:
            for key in (recorded.model or "", "*"):
                queue = self._queues.get(key)
                if queue:
                    scenario = queue.popleft()
                    break
        if scenario is None and recorded.kind == "anthropic":
            from provider_families import default_anthropic

            return default_anthropic(recorded.body)
        if scenario is None:
            default = {
                "gemini": self.default_gemini,
                "chat": self.default_chat,
                "embeddings": self.default_embeddings,
            }[recorded.kind]
            result = default(recorded.body)
            return result if isinstance(result, Reply) else Reply(body=result)
        return scenario(recorded) if callable(scenario) else scenario

    @staticmethod
    def _render(reply: Reply) -> web.Response:
        if isinstance(reply.body, bytes):
            data = reply.body
            content_type = "application/octet-stream"
        elif isinstance(reply.body, str):
            data = reply.body.encode()
            content_type = "text/plain"
        else:
            data = json.dumps(reply.body).encode()
            content_type = "application/json"
        headers = {"Content-Type": content_type, **reply.headers}
        return web.Response(status=reply.status, body=data, headers=headers)

    @staticmethod
    async def _stream_chat(
        request: web.Request, reply: Reply, body: dict[str, Any]
    ) -> web.StreamResponse:
        """A success rendered as chat.completion.chunk SSE (one content chunk, a finish
        chunk, a usage chunk when stream_options.include_usage, then [DONE])."""
        full = reply.body
        choice = full["choices"][0]
        base = {k: full[k] for k in ("id", "created", "model") if k in full}
        base["object"] = "chat.completion.chunk"
        chunks = [
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": choice["message"].get("content")},
                        "logprobs": choice.get("logprobs"),
                        "finish_reason": None,
                    }
                ],
            },
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {},
                        "logprobs": None,
                        "finish_reason": choice["finish_reason"],
                    }
                ],
            },
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": full.get("usage")})
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", **reply.headers}
        )
        await response.prepare(request)
        for chunk in chunks:
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def iter_details(error_body: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The ``details`` entries of a Google error body."""
    yield from (error_body.get("error") or {}).get("details", [])


def _listing(request: RecordedRequest) -> bool:
    """A GET of a model list (`/v1/models`): titjudge asks one when a reply echoes the model."""
    return request.method == "GET" and request.path.rstrip("/").endswith("/models")
