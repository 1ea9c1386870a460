"""The OpenAI wire format the fake server speaks: bodies, errors, tokens, log-probabilities.

Shapes follow the OpenAI API (chat.completion, chat.completion.chunk, embeddings list,
`{"error": {message, type, param, code}}`) closely enough that the openai client and
litellm parse them, and their error texts contain the phrases litellm's exception
mapping looks for. Token counts are approximate: a regex tokenizer (letter runs, 1-3
digit runs, single punctuation, each with its leading whitespace) stands in for BPE,
and each image counts 85 tokens (OpenAI's low-detail cost).
"""

from __future__ import annotations

import base64
import math
import re
import socket
import struct
from typing import Any

from aiohttp import web

from doubles.server_request import BadRequest, ChatRequest, TokenLogprob

_TOKEN = re.compile(r"\s*(?:[^\W\d_]+|\d{1,3}|_|[^\w\s])|\s+")
IMAGE_TOKENS = 85
FINGERPRINT = "fp_titjudge_fake"


def tokenize(text: str) -> list[str]:
    """Split text into pseudo-tokens whose concatenation is exactly `text`."""
    return _TOKEN.findall(text)


def prompt_token_count(request: ChatRequest) -> int:
    """Approximate prompt tokens: text tokens, 4 per message, 85 per image, 3 for the reply primer."""
    return (
        len(tokenize(request.all_text))
        + 4 * len(request.messages)
        + IMAGE_TOKENS * len(request.images)
        + 3
    )


def truncate(text: str, max_tokens: int | None) -> tuple[str, bool]:
    """Cut `text` to `max_tokens` tokens like a model hitting its limit; (text, was_cut)."""
    tokens = tokenize(text)
    if max_tokens is None or len(tokens) <= max_tokens:
        return text, False
    return "".join(tokens[:max_tokens]), True


# --------------------------------------------------------------------------- log-probabilities

_FILLERS = (
    " the",
    " a",
    ",",
    ".",
    " and",
    " of",
    " to",
    " in",
    " is",
    " with",
    " on",
    '"',
    ":",
    " it",
    " that",
)
_NUMBER_P0 = 1.0 / 3.0


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def default_logprobs(text: str, top_k: int) -> list[dict[str, Any]]:
    """Deterministic log-probabilities for each token of `text`.

    A number token n is sampled with p = 1/3 and its neighbours n+d get
    p = (1/3) * 0.5**|d| (listed n, n+1, n-1, n+2, n-2, ...; negatives skipped), so the
    probability-weighted mean over a symmetric top-k is n. Other tokens get p = 0.9 and
    fillers p = 0.1 * 0.5**(i+1).
    """
    content = []
    for token in tokenize(text):
        stripped = token.strip()
        lead = token[: len(token) - len(token.lstrip())]
        if stripped.isdigit():
            n = int(stripped)
            offsets = [0] + [d for step in range(1, 64) for d in (step, -step) if n + d >= 0]
            top = [
                (f"{lead}{n + d}", math.log(_NUMBER_P0 * 0.5 ** abs(d))) for d in offsets[:top_k]
            ]
            entry = _entry(token, math.log(_NUMBER_P0))
        else:
            fillers = [f for f in _FILLERS if f != token][: max(top_k - 1, 0)]
            top = [(token, math.log(0.9))] if top_k else []
            top += [(f, math.log(0.1 * 0.5 ** (i + 1))) for i, f in enumerate(fillers)]
            entry = _entry(token, math.log(0.9))
        entry["top_logprobs"] = [_entry(t, lp) for t, lp in top]
        content.append(entry)
    return content


def scripted_logprobs(items: tuple[TokenLogprob, ...], top_k: int) -> list[dict[str, Any]]:
    """A responder's own log-probabilities in wire form, top lists cut to `top_k`."""
    content = []
    for item in items:
        entry = _entry(item.token, item.logprob)
        entry["top_logprobs"] = [_entry(t, lp) for t, lp in item.top[:top_k]]
        content.append(entry)
    return content


# --------------------------------------------------------------------------- bodies


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def completion_body(
    completion_id: str,
    created: int,
    model: str,
    text: str,
    finish_reason: str,
    logprobs: list[dict[str, Any]] | None,
    n: int,
    prompt_tokens: int,
) -> dict[str, Any]:
    """A `chat.completion` object with `n` identical choices."""
    choice_logprobs = {"content": logprobs, "refusal": None} if logprobs is not None else None
    choices: list[dict[str, Any]] = [
        {
            "index": index,
            "message": {"role": "assistant", "content": text, "refusal": None, "annotations": []},
            "logprobs": choice_logprobs,
            "finish_reason": finish_reason,
        }
        for index in range(n)
    ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": FINGERPRINT,
        "choices": choices,
        "usage": usage(prompt_tokens, len(tokenize(text)) * n),
    }


def stream_chunks(
    completion_id: str,
    created: int,
    model: str,
    text: str,
    finish_reason: str,
    logprobs: list[dict[str, Any]] | None,
    prompt_tokens: int,
    include_usage: bool,
) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` sequence for one choice: role, one chunk per token, finish."""

    def chunk(delta: dict[str, Any], finish: str | None = None, lp: Any = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": lp, "finish_reason": finish}
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": FINGERPRINT,
            "choices": [choice],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    for index, token in enumerate(tokenize(text)):
        lp = (
            {"content": [logprobs[index]], "refusal": None}
            if logprobs and index < len(logprobs)
            else None
        )
        chunks.append(chunk({"content": token}, lp=lp))
    chunks.append(chunk({}, finish=finish_reason))
    if include_usage:
        final = chunk({})
        final["choices"] = []
        final["usage"] = usage(prompt_tokens, len(tokenize(text)))
        chunks.append(final)
    return chunks


def embeddings_body(
    vectors: list[list[float]], model: str, encoding: str, tokens: int
) -> dict[str, Any]:
    """An embeddings `list`; `encoding` 'base64' packs little-endian float32 like OpenAI."""
    data = []
    for index, vector in enumerate(vectors):
        value: Any = vector
        if encoding == "base64":
            value = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
        data.append({"object": "embedding", "index": index, "embedding": value})
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


# --------------------------------------------------------------------------- errors

_INJECTED = " (injected by the titjudge fake server)"


def error_body(
    message: str, type_: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def format_retry_after(seconds: float) -> str:
    """Retry-After value: integer seconds when whole, else a decimal (openai-python reads both)."""
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def retry_headers(seconds: float) -> dict[str, str]:
    return {
        "Retry-After": format_retry_after(seconds),
        "retry-after-ms": str(round(seconds * 1000)),
    }


def fault_error(
    kind: str, message: str | None, retry_after: float, prompt_tokens: int, context_window: int
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, body, headers) for an HTTP-level fault, worded like OpenAI's own errors
    (`no_choices`: a 200 whose `choices` list is empty)."""
    if kind == "no_choices":
        return 200, no_choices_body(), {}
    if kind == "429":
        text = message or "Rate limit reached for requests. Please try again later."
        return (
            429,
            error_body(text + _INJECTED, "requests", "rate_limit_exceeded"),
            retry_headers(retry_after),
        )
    if kind == "500":
        text = message or "The server had an error processing your request. Sorry about that!"
        return 500, error_body(text + _INJECTED, "server_error"), {}
    if kind == "503":
        text = message or "The engine is currently overloaded, please try again later."
        return 503, error_body(text + _INJECTED, "server_error", "service_unavailable"), {}
    if kind == "400":
        text = message or "Invalid value for 'messages': the request could not be parsed."
        return (
            400,
            error_body(text + _INJECTED, "invalid_request_error", "invalid_value", "messages"),
            {},
        )
    if kind == "401":
        text = (
            message
            or "Incorrect API key provided: sk-****. You can find your API key in your account settings."
        )
        return 401, error_body(text + _INJECTED, "invalid_request_error", "invalid_api_key"), {}
    if kind == "404":
        # OpenAI's reply naming a model that does not exist (the model in backticks; observed
        # bodies: github.com/openai/codex/issues/7074)
        text = message or "The model `gpt-nope` does not exist or you do not have access to it."
        return 404, error_body(text + _INJECTED, "invalid_request_error", "model_not_found"), {}
    if kind == "context_length":
        return 400, context_length_error(prompt_tokens, context_window, injected=True), {}
    raise ValueError(f"{kind!r} is not an error-response fault")


def context_length_error(
    prompt_tokens: int, context_window: int, injected: bool = False
) -> dict[str, Any]:
    text = (
        f"This model's maximum context length is {context_window} tokens. However, your messages "
        f"resulted in {prompt_tokens} tokens. Please reduce the length of the messages."
    )
    return error_body(
        text + (_INJECTED if injected else ""),
        "invalid_request_error",
        "context_length_exceeded",
        "messages",
    )


def no_choices_body() -> dict[str, Any]:
    """HTTP 200 with an empty `choices` list, as Azure OpenAI answers a prompt its content
    filter stopped: `{"choices": [], ..., "prompt_filter_results": [...]}` (the reply quoted in
    github.com/InternLM/MindSearch/issues/310; github.com/keephq/keep/issues/6706 reports the
    same 200 with `"choices": []` from OpenAI-compatible backends)."""
    categories = ("hate", "self_harm", "sexual", "violence")
    return {
        "id": "",
        "object": "",
        "created": 0,
        "model": "",
        "choices": [],
        "prompt_filter_results": [
            {
                "prompt_index": 0,
                "content_filter_results": {
                    name: {
                        "filtered": name == "violence",
                        "severity": "high" if name == "violence" else "safe",
                    }
                    for name in categories
                },
            }
        ],
    }


#: HTTP 200 whose body is cut off mid-JSON
MALFORMED_BODY = '{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assist'


# --------------------------------------------------------------------------- responses


def json_response(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(body, status=status, headers=headers)


def error_response(
    status: int,
    message: str,
    type_: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    return json_response(status, error_body(message, type_, code, param), headers)


def bad_request(exc: BadRequest) -> web.Response:
    return error_response(400, str(exc), code=exc.code, param=exc.param)


def reset_connection(http: web.Request) -> web.Response:
    """Drop the TCP connection with an RST and no response bytes."""
    transport = http.transport
    if transport is not None:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
    return web.Response(status=200)
