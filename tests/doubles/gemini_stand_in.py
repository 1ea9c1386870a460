"""The provider stand-in (tests/conformance/provider_server.py) answering Gemini's
generateContent as the fake OpenAI server's `auto` responder answers a chat request: describe
an image, or score a PROMPT against a DESCRIPTION in the request's JSON schema. The Gemini
batch double (`doubles.gemini_batch_server`) answers every batch line through one of these, so
a batch reply is the online one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# the stand-in imports its sibling provider_families as a top-level module
_CONFORMANCE = str(Path(__file__).resolve().parents[1] / "conformance")
if _CONFORMANCE not in sys.path:
    sys.path.append(_CONFORMANCE)

from provider_server import ProviderServer, RecordedRequest, Reply, gemini_ok  # noqa: E402

from doubles.server_request import ChatRequest, as_reply  # noqa: E402
from doubles.server_scripts import build_responder  # noqa: E402


def gemini_chat_request(body: dict[str, Any], model: str) -> ChatRequest:
    """A generateContent body as the fake OpenAI server's parsed request, so its responders
    (describe, judge) answer it: contents -> messages (inline images as data URIs), the system
    instruction -> a system message, responseJsonSchema -> response_format."""
    messages: list[dict[str, Any]] = []
    system = body.get("system_instruction") or body.get("systemInstruction")
    if system:
        text = "\n".join(p.get("text", "") for p in system.get("parts", []))
        messages.append({"role": "system", "content": text})
    for content in body.get("contents", []):
        parts: list[dict[str, Any]] = []
        for part in content.get("parts", []):
            blob = part.get("inline_data") or part.get("inlineData")
            if blob:
                mime = blob.get("mime_type") or blob.get("mimeType")
                url = f"data:{mime};base64,{blob['data']}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
            elif "text" in part and not part.get("thought"):
                parts.append({"type": "text", "text": part["text"]})
        role = "assistant" if content.get("role") == "model" else "user"
        messages.append({"role": role, "content": parts})
    chat: dict[str, Any] = {"model": model, "messages": messages}
    config = body.get("generationConfig") or body.get("generation_config") or {}
    schema = next(
        (config[k] for k in ("response_json_schema", "responseJsonSchema") if k in config), None
    )
    if schema is not None:
        chat["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    return ChatRequest(chat)


class GeminiStandIn(ProviderServer):
    """The provider stand-in whose generateContent answers describe and judge requests (the
    fake server's `auto` responder), with a thought part, thoughtsTokenCount and, when
    `cached_tokens` is set, cachedContentTokenCount."""

    thread_name = "gemini-stand-in"

    def __init__(self, descriptions: dict[str, str] | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.descriptions = descriptions
        self.responder = build_responder("auto", descriptions=descriptions)
        self.thoughts = 24
        self.cached_tokens = 0

    def answer(self, recorded: RecordedRequest) -> Reply:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        chat = gemini_chat_request(body, recorded.model or "gemini")
        text = as_reply(self.responder(chat)).text
        prompt = 20 + len(chat.all_text.split()) + 258 * len(chat.images)
        reply = gemini_ok(
            text,
            self.thoughts,
            thought_text="Weighing the request." if self.thoughts else None,
            prompt_tokens=prompt,
            model=recorded.model or "gemini",
        )
        if self.cached_tokens:
            reply.body["usageMetadata"]["cachedContentTokenCount"] = self.cached_tokens
        return reply

    def _next(self, recorded: RecordedRequest) -> Reply:
        if recorded.kind == "gemini" and not self.pending():
            return self.answer(recorded)
        return super()._next(recorded)


__all__ = ["GeminiStandIn", "RecordedRequest", "gemini_chat_request"]
