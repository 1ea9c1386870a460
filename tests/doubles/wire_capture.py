"""A loopback HTTP server that keeps every request's bytes and answers from a queue of
canned replies: status, JSON body and headers, exactly as given.

The two send paths of a `litellm:` model (through litellm, and direct) are pointed at one
such server in turn: what arrived is compared byte for byte, and the same canned reply
(taken from the provider's documented shapes, cited where a test builds it) is read by
both paths.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from doubles.loopback import LoopbackThread


@dataclass(frozen=True)
class Arrived:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Canned:
    """One reply: a JSON body (a str is sent as it is), its status and headers."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


#: OpenAI's chat completion object (platform.openai.com/docs/api-reference/chat/object)
def completion(content: str = "ok", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "served-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
    body.update(extra)
    return body


class CaptureServer(LoopbackThread):
    thread_name = "wire-capture"

    def __init__(self) -> None:
        self.arrived: list[Arrived] = []
        self._replies: list[Canned] = []
        self._lock = threading.Lock()
        self._thread = None
        self._loop = None
        self._url: str | None = None

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("capture server is not running")
        return self._url

    def reply(self, *replies: Canned) -> None:
        """Queue replies for the next requests (when none is queued: `completion()`)."""
        with self._lock:
            self._replies.extend(replies)

    async def astart(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        port = await self.serve(app)
        self._url = f"http://127.0.0.1:{port}/v1"
        return self._url

    async def _handle(self, http: web.Request) -> web.StreamResponse:
        raw = await http.read()
        with self._lock:
            self.arrived.append(Arrived(http.path, dict(http.headers), raw))
            canned = self._replies.pop(0) if self._replies else Canned(completion())
        text = canned.body if isinstance(canned.body, str) else json.dumps(canned.body)
        return web.Response(
            status=canned.status,
            text=text,
            headers=canned.headers,
            content_type="application/json",
        )


__all__ = ["Arrived", "Canned", "CaptureServer", "completion"]
