"""A loopback stand-in for llama-cpp-python's OpenAI-compatible server (`llama_cpp.server`,
0.3.x) as far as its structured-output dialect goes: `/v1/chat/completions` takes
`response_format` of type `text` or `json_object` (with an optional `schema`), and refuses
`json_schema` with HTTP 500 whose body carries the request-validation error's text.

Modelled on the server's own code (its `types.py` `ResponseFormat` Literal, `errors.py`
`error_message_wrapper`: with no body to format, `500, ErrorResponse(message=str(error),
type="internal_server_error", param=None, code=None)`), as worked through and reproduced in
docs/research/server-dialects.md, and on the report of the same behaviour in
https://github.com/ggml-org/llama.cpp/issues/23463 ("llama_cpp.server returns HTTP 500 instead
of HTTP 422 when response_format type is json_schema"). The message is FastAPI's before 0.124
(`str(RequestValidationError)`: the list of pydantic error dicts).
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from doubles.loopback import LoopbackThread

#: the validation error's text for a `json_schema` response_format (FastAPI < 0.124)
REFUSAL = (
    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
    "should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' "
    "or 'json_object'\"}}]"
)


class LlamaCppServer(LoopbackThread):
    """`with LlamaCppServer() as server:` serves at `server.url` (ends in /v1); `answer` is
    the JSON object a taken request is answered with."""

    thread_name = "llama-cpp-server"

    def __init__(self, answer: dict[str, Any] | None = None):
        self.answer = answer or {"rationale": "covers the prompt", "score": 70}
        self.requests: list[dict[str, Any]] = []
        self._thread = None
        self._loop = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    async def astart(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._port = await self.serve(app, access_log=None, shutdown_timeout=0.5)
        return self.url

    async def _chat(self, http: web.Request) -> web.Response:
        body = await http.json()
        self.requests.append(body)
        kind = (body.get("response_format") or {}).get("type", "text")
        if kind not in ("text", "json_object"):
            error = {
                "message": REFUSAL,
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
            return web.json_response({"error": error}, status=500)
        content = json.dumps(self.answer)
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "smollm2"),  # the server echoes the request's model
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62},
            }
        )
