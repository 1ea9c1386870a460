"""A loopback stand-in that enforces providers' documented byte limits on images, for the
images-within-limits tests (issue 30). One aiohttp server on 127.0.0.1 answering

- Anthropic Messages ``POST /v1/messages`` (litellm's ``anthropic/`` provider posts there
  given ``api_base`` = the root URL). Images arrive as content blocks ``{"type": "image",
  "source": {"type": "base64", "media_type", "data"}}`` and are refused over 5 MB with the
  400 Anthropic returns: ``{"type": "error", "error": {"type": "invalid_request_error",
  "message": "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: N bytes >
  5242880 bytes"}, "request_id": ...}`` (error shape: https://docs.claude.com/en/api/errors;
  message as observed in https://github.com/anthropics/claude-code/issues/10612). The stand-in
  counts the base64 text, the stricter reading. A success is a Messages response
  (https://docs.anthropic.com/en/api/messages: ``type: "message"``, ``content: [{"type":
  "text", "text"}]``, ``stop_reason: "end_turn"``, ``usage: {input_tokens, output_tokens}``).
- Gemini ``generateContent`` (``.../models/{model}:generateContent``), whose body Vertex AI
  shares, refusing any ``inlineData`` part over Vertex AI's "Maximum file size per file for
  inline data ... 7 MB" (https://docs.cloud.google.com/vertex-ai/generative-ai/docs/multimodal/image-understanding)
  with a Google error body (``{"error": {"code": 400, "message", "status": "INVALID_ARGUMENT"}}``;
  the message text is this stand-in's: Google's is not documented). 7 MB is read as
  7,000,000 decoded bytes.

Every image received is recorded (``server.images``: provider, mime, base64 length, decoded
length), as is every request's status.
"""

from __future__ import annotations

import base64
import itertools
import re
import threading
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from doubles.loopback import LoopbackThread

ANTHROPIC_IMAGE_LIMIT = 5 * 1024 * 1024  # base64 bytes, per the observed error
VERTEX_INLINE_LIMIT = 7_000_000  # decoded bytes per inline file
_GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):generateContent$")
_ids = itertools.count(1)


@dataclass
class SeenImage:
    provider: str
    mime: str
    base64_bytes: int
    decoded_bytes: int


class ImageLimitServer(LoopbackThread):
    thread_name = "image-limit-server"

    def __init__(self) -> None:
        self.host, self.port = "127.0.0.1", 0
        self.images: list[SeenImage] = []
        self.statuses: list[int] = []
        self._lock = threading.Lock()
        self._runner: web.AppRunner | None = None
        self._thread = None
        self._loop = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def astart(self) -> str:
        app = web.Application(client_max_size=128 * 1024 * 1024)
        app.router.add_route("POST", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self.url

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        if request.path.rstrip("/").endswith("/v1/messages"):
            status, reply = self._anthropic(body)
        elif found := _GEMINI_PATH.search(request.path):
            status, reply = self._vertex(body, found["model"])
        else:
            status, reply = 404, {"error": {"message": f"no route for {request.path}"}}
        with self._lock:
            self.statuses.append(status)
        return web.json_response(reply, status=status)

    def _seen(self, provider: str, mime: str, data: str) -> SeenImage:
        seen = SeenImage(provider, mime, len(data), len(base64.b64decode(data)))
        with self._lock:
            self.images.append(seen)
        return seen

    def _anthropic(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        for m, message in enumerate(body.get("messages", [])):
            content = message.get("content")
            for c, block in enumerate(content if isinstance(content, list) else []):
                if block.get("type") != "image":
                    continue
                source = block["source"]
                seen = self._seen("anthropic", source.get("media_type", ""), source["data"])
                if seen.base64_bytes > ANTHROPIC_IMAGE_LIMIT:
                    message_text = (
                        f"messages.{m}.content.{c}.image.source.base64: image exceeds 5 MB "
                        f"maximum: {seen.base64_bytes} bytes > {ANTHROPIC_IMAGE_LIMIT} bytes"
                    )
                    return 400, {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": message_text},
                        "request_id": f"req_{next(_ids):024d}",
                    }
        return 200, {
            "id": f"msg_{next(_ids):024d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude"),
            "content": [{"type": "text", "text": "A square of coloured noise."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1600, "output_tokens": 8},
        }

    def _vertex(self, body: dict[str, Any], model: str) -> tuple[int, dict[str, Any]]:
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                inline = part.get("inlineData") or part.get("inline_data")
                if not inline:
                    continue
                mime = inline.get("mimeType") or inline.get("mime_type") or ""
                seen = self._seen("vertex_ai", mime, inline["data"])
                if seen.decoded_bytes > VERTEX_INLINE_LIMIT:
                    message = (
                        f"inline data of {seen.decoded_bytes} bytes exceeds the maximum "
                        f"file size for inline data of 7 MB"
                    )
                    return 400, {
                        "error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
                    }
        candidate = {
            "content": {"parts": [{"text": "A square of coloured noise."}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
        usage = {"promptTokenCount": 300, "candidatesTokenCount": 8, "totalTokenCount": 308}
        return 200, {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model}
