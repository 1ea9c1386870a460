"""Anthropic's Messages API as the loopback doubles answer it: a Messages body is read as the
fake OpenAI server's `ChatRequest` and answered by the same responders
(`doubles.server_scripts`: the stored description of an image, a judge's overlap score shaped
to the schema), and the reply written as an Anthropic Message.

Shapes, from Anthropic's docs:

- request (https://docs.claude.com/en/api/messages): `model`, `max_tokens`, `messages` [{role,
  content: str | blocks}], `system` (str | text blocks); an image block is `{"type": "image",
  "source": {"type": "base64", "media_type", "data"}}`
  (https://docs.claude.com/en/docs/build-with-claude/vision).
- structured output: `output_format {"type": "json_schema", "schema"}` under the beta header
  `structured-outputs-2025-11-13` (https://docs.claude.com/en/docs/build-with-claude/structured-outputs);
  without it the API answers `output_format: Extra inputs are not permitted`, in a batch too,
  where the beta must be named when the batch is created
  (https://github.com/anthropics/anthropic-sdk-python/issues/1118). A forced tool
  (`tool_choice {"type": "tool", "name"}`) is answered with a `tool_use` block `{"type", "id",
  "name", "input"}` and `stop_reason: "tool_use"`
  (https://docs.claude.com/en/docs/agents-and-tools/tool-use/overview).
- reply: `{"id": "msg_...", "type": "message", "role": "assistant", "model", "content",
  "stop_reason": "end_turn" | "max_tokens" | "tool_use", "stop_sequence": null, "usage":
  {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}}`
  (`input_tokens` counts the uncached prompt only); with thinking enabled a `{"type":
  "thinking", "thinking", "signature"}` block comes first
  (https://docs.claude.com/en/docs/build-with-claude/extended-thinking).
- errors: `{"type": "error", "error": {"type", "message"}}` (https://docs.claude.com/en/api/errors).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from doubles.server_request import BadRequest, ChatRequest, Responder, as_reply
from doubles.server_wire import prompt_token_count, tokenize, truncate

STRUCTURED_BETA = "structured-outputs-2025-11-13"
_ids = itertools.count(1)


@dataclass
class Answer:
    """One HTTP answer of the Messages API: its status and JSON body."""

    status: int
    body: dict[str, Any]


def error(status: int, kind: str, message: str) -> Answer:
    return Answer(status, {"type": "error", "error": {"type": kind, "message": message}})


def answer_messages(
    responder: Responder,
    params: Any,
    betas: set[str],
    *,
    replace: str | None = None,
    cache_read: int = 0,
) -> Answer:
    """What `POST /v1/messages` answers to `params` sent with `betas`; `replace`: the reply's
    text instead of the responder's (an invalid answer); `cache_read`: prompt tokens reported
    as read from the prompt cache."""
    problem = _invalid(params, betas)
    if problem is not None:
        return error(400, "invalid_request_error", problem)
    try:
        request = ChatRequest(_chat_body(params))
        reply = as_reply(responder(request))
    except BadRequest as exc:
        return error(400, "invalid_request_error", str(exc))
    if reply.fault is not None:
        return error(500, "api_error", f"the double's responder gave a fault: {reply.fault.kind}")
    content: list[dict[str, Any]] = []
    thinking = params.get("thinking") or {}
    if thinking.get("type") == "enabled":
        content.append(
            {"type": "thinking", "thinking": "Weighing each element.", "signature": "EqQBCgIY"}
        )
    tool = _forced_tool(params)
    if tool is not None and replace is None:
        data = reply.data if reply.data is not None else {"text": reply.text}
        content.append(
            {"type": "tool_use", "id": f"toolu_{next(_ids):020d}", "name": tool, "input": data}
        )
        stop, said = "tool_use", json.dumps(data)
    else:
        said, cut = truncate(replace if replace is not None else reply.text, params["max_tokens"])
        content.append({"type": "text", "text": said})
        stop = "max_tokens" if cut else "end_turn"
    prompt = prompt_token_count(request)
    cached = min(cache_read, prompt)
    return Answer(
        200,
        {
            "id": f"msg_{next(_ids):024d}",
            "type": "message",
            "role": "assistant",
            "model": params["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt - cached,
                "output_tokens": len(tokenize(said)),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": cached,
            },
        },
    )


def _invalid(params: Any, betas: set[str]) -> str | None:
    """Why the Messages API refuses `params`, or None."""
    if not isinstance(params, dict):
        return "params: Input should be a valid dictionary"
    for name, kind in (("model", str), ("max_tokens", int), ("messages", list)):
        if not isinstance(params.get(name), kind):
            return f"{name}: Field required"
    if not params["messages"]:
        return "messages: at least one message is required"
    if "output_format" in params and STRUCTURED_BETA not in betas:
        return "output_format: Extra inputs are not permitted"
    if "extra_body" in params:  # not a Messages API parameter: litellm's own name
        return "extra_body: Extra inputs are not permitted"
    return None


def _chat_body(params: dict[str, Any]) -> dict[str, Any]:
    """The Messages body as an OpenAI chat body (what `ChatRequest` reads)."""
    messages: list[dict[str, Any]] = []
    system = params.get("system")
    if system:
        text = system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system)
        messages.append({"role": "system", "content": text})
    for message in params["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            content = [_part(block) for block in content if block.get("type") != "thinking"]
        messages.append({"role": message.get("role"), "content": content})
    chat: dict[str, Any] = {"model": params["model"], "messages": messages}
    chat["max_tokens"] = params["max_tokens"]
    schema = (params.get("output_format") or {}).get("schema")
    tool = _forced_tool(params)
    for found in params.get("tools") or []:
        if found.get("name") == tool:
            schema = found.get("input_schema")
    if isinstance(schema, dict):
        chat["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    return chat


def _part(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text", "")}
    if kind == "image":
        source = block.get("source") or {}
        if source.get("type") != "base64":
            raise BadRequest("image source: only base64 images are served here")
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        return {"type": "image_url", "image_url": {"url": url}}
    if kind == "tool_use":
        return {"type": "text", "text": json.dumps(block.get("input"))}
    if kind == "tool_result":
        inner = block.get("content")
        return {"type": "text", "text": inner if isinstance(inner, str) else json.dumps(inner)}
    raise BadRequest(f"content block type {kind!r} is not served here")


def _forced_tool(params: dict[str, Any]) -> str | None:
    choice = params.get("tool_choice") or {}
    return choice.get("name") if choice.get("type") == "tool" else None


__all__ = ["STRUCTURED_BETA", "Answer", "answer_messages", "error"]
