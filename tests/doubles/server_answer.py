"""The fake server's successful chat answer: a `chat.completion`, or its SSE chunks when the
request streams; see `doubles.server` for the overview."""

from __future__ import annotations

import json
import time

from aiohttp import web

from doubles.server_dialects import fingerprint
from doubles.server_request import ChatRequest, Reply
from doubles.server_wire import (
    completion_body,
    default_logprobs,
    json_response,
    scripted_logprobs,
    stream_chunks,
    tokenize,
    truncate,
)


async def write_answer(
    http: web.Request,
    request: ChatRequest,
    reply: Reply,
    tokens: int,
    completion_id: str,
    entry: list[float] | None = None,
) -> web.StreamResponse:
    """Answer `request` with `reply` cut at its max_tokens (`tokens`: its prompt tokens);
    `entry`, a tpm window's log entry, is settled to the usage the answer reports."""
    text, cut = truncate(reply.text, request.max_tokens)
    if entry is not None:  # the tpm window counts the usage this reply reports
        entry[1] = tokens + len(tokenize(text)) * request.n
    finish = "length" if cut else reply.finish_reason
    logprobs = None
    if request.logprobs:
        k = request.top_logprobs
        logprobs = (
            scripted_logprobs(reply.logprobs, k)
            if reply.logprobs is not None
            else default_logprobs(text, k)
        )
    created = int(time.time())
    model = reply.model or request.model
    if not request.stream:
        body = completion_body(
            completion_id, created, model, text, finish, logprobs, request.n, tokens
        )
        if fingerprint(request.server) is not None:
            body["system_fingerprint"] = fingerprint(request.server)
        if reply.cached_tokens is not None:
            body["usage"]["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
        return json_response(200, body)
    options = request.body.get("stream_options")
    include_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
    chunks = stream_chunks(
        completion_id, created, model, text, finish, logprobs, tokens, include_usage
    )
    response = web.StreamResponse(
        status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(http)
    for chunk in chunks:
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response
