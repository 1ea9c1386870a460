"""The OpenAI-style messages titjudge hands litellm for one request (litellm turns them into
each provider's own shape)."""

from __future__ import annotations

import base64
from typing import Any

from titjudge.models.core.base import GenerateRequest


def build_messages(request: GenerateRequest, *, single_turn: bool = False) -> list[dict[str, Any]]:
    """OpenAI-style messages; images are attached to the first user turn. `single_turn`: an
    earlier exchange (the re-ask after an invalid reply) is quoted in one user turn instead of
    sent as model turns, for families that expect their own thought signatures on every
    earlier model turn (Gemini 3: https://ai.google.dev/gemini-api/docs/thought-signatures)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    turns = [*request.history, ("user", request.prompt)]
    if single_turn and request.history:
        turns = [("user", _quoted_exchange(turns))]
    attached = False
    for role, text in turns:
        if role == "user" and not attached and request.images:
            parts: list[dict[str, Any]] = [
                {"type": "image_url", "image_url": {"url": _data_uri(image.data, image.mime)}}
                for image in request.images
            ]
            parts.append({"type": "text", "text": text})
            messages.append({"role": "user", "content": parts})
            attached = True
        else:
            messages.append({"role": role, "content": text})
    return messages


def _quoted_exchange(turns: list[tuple[str, str]]) -> str:
    """Earlier turns and the last user turn as one user message."""
    *earlier, (_, last) = turns
    quoted = "\n\n".join(
        f"[{'your reply' if role == 'assistant' else 'my request'}]\n{text}"
        for role, text in earlier
    )
    return f"Earlier in this conversation:\n\n{quoted}\n\n[now]\n{last}"


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


__all__ = ["build_messages"]
