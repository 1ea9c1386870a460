"""Gemini's generateContent on the fake servers' responders: a GenerateContentRequest read as
the chat request the responders know, and their reply written as a GenerateContentResponse.

Shapes: the request's `contents[].parts` (`text`, `inline_data`/`inlineData` `{mime_type,
data}`), `system_instruction`, `generationConfig` (`response_json_schema` / `responseSchema`
for structured output), and the response's `candidates[].content.parts`, `finishReason`,
`usageMetadata {promptTokenCount, candidatesTokenCount, totalTokenCount}`, `modelVersion`
(https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference). Proto JSON
takes both spellings of a field (snake_case and lowerCamelCase), so both are read here.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any

from doubles.server_request import ChatRequest, Responder, as_reply


def _get(obj: dict[str, Any], snake: str) -> Any:
    head, *rest = snake.split("_")
    camel = head + "".join(word.title() for word in rest)
    return obj.get(snake, obj.get(camel))


def chat_body(request: dict[str, Any], model: str) -> dict[str, Any]:
    """The OpenAI chat body that asks what `request` asks."""
    messages: list[dict[str, Any]] = []
    system = _get(request, "system_instruction")
    if isinstance(system, dict):
        text = "\n".join(str(p.get("text", "")) for p in system.get("parts") or [])
        messages.append({"role": "system", "content": text})
    for content in request.get("contents") or []:
        parts: list[dict[str, Any]] = []
        for part in content.get("parts") or []:
            inline = _get(part, "inline_data")
            if isinstance(inline, dict):
                mime = _get(inline, "mime_type")
                url = f"data:{mime};base64,{inline.get('data')}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
            elif "text" in part:
                parts.append({"type": "text", "text": str(part["text"])})
        role = "assistant" if content.get("role") == "model" else "user"
        messages.append({"role": role, "content": parts})
    body: dict[str, Any] = {"model": model, "messages": messages}
    config = _get(request, "generation_config") or {}
    schema = _get(config, "response_json_schema") or _get(config, "response_schema")
    if isinstance(schema, dict):
        wrapper = {"name": "output", "schema": schema}
        body["response_format"] = {"type": "json_schema", "json_schema": wrapper}
    return body


def body_hash(request: dict[str, Any]) -> str:
    """The hash of a request without its labels (a batch line's id rides there)."""
    plain = {k: v for k, v in request.items() if k != "labels"}
    return hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()


async def answer(responder: Responder, request: dict[str, Any], model: str) -> dict[str, Any]:
    """The GenerateContentResponse the responder gives `request`; token counts are derived
    from the request's and the reply's sizes, the same online and in a batch line."""
    found = responder(ChatRequest(chat_body(request, model)))
    if inspect.isawaitable(found):
        found = await found
    text = as_reply(found).text
    plain = {k: v for k, v in request.items() if k != "labels"}
    prompt = max(1, len(json.dumps(plain)) // 40)
    candidates = max(1, len(text) // 4)
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": candidates,
            "totalTokenCount": prompt + candidates,
        },
        "modelVersion": model,
    }


__all__ = ["answer", "body_hash", "chat_body"]
