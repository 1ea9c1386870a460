"""What each model family's provider refuses, and Anthropic's Messages shape, for the stand-in.

The provider stand-in (provider_server.py) answers with these when ``validate_families`` is on
(the default): a request the real provider rejects gets the documented (or, where the docs give
no body, the observed) error, without consuming a queued reply, so a test can assert that
titjudge never sends such a request. Sources per rule:

- OpenAI reasoning models (gpt-5*, o1/o3/o4-mini): "temperature, top_p and n are fixed at 1,
  while presence_penalty and frequency_penalty are fixed at 0"
  (https://platform.openai.com/docs/guides/reasoning). The 400 bodies are observed, not
  published: gpt-5 ``code: "unsupported_value"`` (diffbot/code-gpt-docs#445), o-series
  ``code: "unsupported_parameter"`` (soberlemur/autopo#57).
- Gemini 3: "You cannot use both thinking_level and the legacy thinking_budget parameter in
  the same request. Doing so will return a 400 error"; Gemini 3 Pro takes thinkingLevel low or
  high (https://ai.google.dev/gemini-api/docs/gemini-3). Message text not published: ours.
- Anthropic Messages API (https://docs.claude.com/en/api/messages): ``POST /v1/messages`` with
  ``x-api-key`` and ``anthropic-version``; the reply ``{"type": "message", "content": [...],
  "stop_reason", "usage": {"input_tokens", "output_tokens"}}``; thinking blocks
  ``{"type": "thinking", "thinking", "signature"}`` come first
  (https://docs.claude.com/en/docs/build-with-claude/extended-thinking). Its rules: budget at
  least 1,024 and below max_tokens; thinking "isn't compatible with temperature or top_k
  modifications as well as forced tool use"; top_p from 0.95 to 1 while thinking. Error shape
  ``{"type": "error", "error": {"type", "message"}, "request_id"}``
  (https://docs.claude.com/en/api/errors); the budget messages are observed
  (themaximalist/llm.js#30; liuw1535/antigravity2api-nodejs#149).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from provider_server import RecordedRequest, Reply

_ids = itertools.count(1)
REASONING = re.compile(r"^(o\d|gpt-5(?!-chat))")


def _openai_error(message: str, param: str, code: str | None) -> Reply:
    return Reply(
        status=400,
        body={
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        },
    )


def openai_reasoning_refusal(request: RecordedRequest) -> Reply | None:
    """The 400 an OpenAI reasoning model answers to a sampling parameter it refuses."""
    body = request.body if isinstance(request.body, dict) else {}
    model = str(body.get("model") or "")
    if not REASONING.match(model):
        return None
    gpt5 = model.startswith("gpt-5")
    if "temperature" in body and body["temperature"] != 1:
        if gpt5:
            return _openai_error(
                f"Unsupported value: 'temperature' does not support {body['temperature']} with "
                "this model. Only the default (1) value is supported.",
                "temperature",
                "unsupported_value",
            )
        return _openai_error(
            "Unsupported parameter: 'temperature' is not supported with this model.",
            "temperature",
            "unsupported_parameter",
        )
    for name in ("top_p", "presence_penalty", "frequency_penalty", "logprobs"):
        if name in body:
            return _openai_error(
                f"Unsupported parameter: '{name}' is not supported with this model.",
                name,
                "unsupported_parameter",
            )
    if "max_tokens" in body:
        return _openai_error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "max_tokens",
            "unsupported_parameter",
        )
    return None


def gemini3_refusal(model: str | None, config: dict[str, Any]) -> Reply | None:
    """Gemini 3's 400 for thinkingLevel beside thinkingBudget, or a level the model lacks."""
    if not model or not re.search(r"gemini-3", model):
        return None
    thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
    level = thinking.get("thinkingLevel") or thinking.get("thinking_level")
    budget = thinking.get("thinkingBudget", thinking.get("thinking_budget"))
    message = None
    if level is not None and budget is not None:
        message = "You cannot use both thinking_level and thinking_budget in the same request."
    elif level is not None and "pro" in model and level not in ("low", "high"):
        message = f"thinking_level {level!r} is not supported by {model}."
    if message is None:
        return None
    return Reply(
        status=400, body={"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    )


def anthropic_error(status: int, type_: str, message: str) -> Reply:
    return Reply(
        status=status,
        body={
            "type": "error",
            "error": {"type": type_, "message": message},
            "request_id": f"req_{next(_ids):024d}",
        },
    )


def anthropic_refusal(request: RecordedRequest) -> Reply | None:
    """The 400 Anthropic answers to what extended thinking forbids."""
    body = request.body if isinstance(request.body, dict) else {}
    thinking = body.get("thinking") or {}
    if thinking.get("type") != "enabled":
        if "temperature" in body and not 0 <= body["temperature"] <= 1:
            return anthropic_error(
                400, "invalid_request_error", "temperature: range: 0 <= temperature <= 1"
            )
        return None
    budget = thinking.get("budget_tokens") or 0
    if budget < 1024:
        return anthropic_error(
            400,
            "invalid_request_error",
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        )
    if budget >= body.get("max_tokens", 0):
        return anthropic_error(
            400,
            "invalid_request_error",
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-"
            "thinking#max-tokens-and-context-window-size",
        )
    if "temperature" in body and body["temperature"] != 1 or "top_k" in body:
        return anthropic_error(
            400,
            "invalid_request_error",
            "temperature and top_k may not be set while thinking is enabled",
        )
    top_p = body.get("top_p")
    if top_p is not None and not 0.95 <= top_p <= 1:
        return anthropic_error(400, "invalid_request_error", "top_p must be from 0.95 to 1")
    choice = (body.get("tool_choice") or {}).get("type")
    if choice in ("any", "tool"):
        return anthropic_error(
            400,
            "invalid_request_error",
            "Thinking may not be enabled when tool_choice forces tool use.",
        )
    return None


def anthropic_ok(
    text: str,
    *,
    thinking: str | None = None,
    model: str = "claude-sonnet-4-5-20250929",
    input_tokens: int = 25,
    output_tokens: int | None = None,
    stop_reason: str = "end_turn",
) -> Reply:
    """A Messages API reply: an optional thinking block (with its signature), then the text."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "EqQBCgIYAhIM1g"})
    content.append({"type": "text", "text": text})
    out = output_tokens if output_tokens is not None else max(1, len(text.split()))
    return Reply(
        body={
            "id": f"msg_{next(_ids):024d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": out},
        }
    )


def family_refusal(request: RecordedRequest) -> Reply | None:
    """The refusal the request's provider would answer with, or None."""
    if request.kind == "chat":
        return openai_reasoning_refusal(request)
    if request.kind == "anthropic":
        return anthropic_refusal(request)
    if request.kind == "gemini" and isinstance(request.body, dict):
        config = request.body.get("generationConfig") or request.body.get("generation_config")
        return gemini3_refusal(request.model, config or {})
    return None


def default_anthropic(request_json: Any) -> Reply:
    return anthropic_ok("A plain scene.")


def anthropic_text(request: RecordedRequest) -> str:
    """Every text the request carries (system and messages), joined."""
    body = request.body if isinstance(request.body, dict) else {}
    texts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        texts.append(system)
    elif isinstance(system, list):
        texts += [block.get("text", "") for block in system]
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [block.get("text", "") for block in content if block.get("type") == "text"]
    return "\n".join(texts)


def anthropic_image(request: RecordedRequest) -> str | None:
    """The base64 data of the first image block, if any."""
    body = request.body if isinstance(request.body, dict) else {}
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "image":
                    data: str = block["source"]["data"]
                    return data
    return None
