"""A loopback embeddings server: OpenAI-compatible `POST /v1/embeddings` (OpenAI, vLLM, TEI)
and Gemini's `POST /v1beta/models/{model}:batchEmbedContents`, answering deterministic vectors.

Vectors are `server_text.hashed_embedding` (a signed bag of hashed content words), so texts
sharing words have a higher cosine, and a test can recompute every vector the server sent.

Shapes, from the providers' documentation:
- OpenAI embeddings reference (developers.openai.com/api/reference/resources/embeddings):
  `{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}],
  "model", "usage": {"prompt_tokens", "total_tokens"}}`; `dimensions` shortens the vectors;
  `encoding_format: base64` packs little-endian float32. vLLM's /v1/embeddings ("Pooling
  models", OpenAI-compatible server) and TEI's OpenAI route (`.route("/v1/embeddings",
  post(openai_embed))` in text-embeddings-inference router/src/http/server.rs) answer the same.
- OpenAI errors: `{"error": {"message", "type", "param", "code"}}`; a 429 carries Retry-After.
- vLLM errors: `{"error": {"message", "type": "BadRequestError", "param", "code": 400}}` since
  vLLM 0.10.1 (vllm PR #22099; shown as "Before" in vllm PR #37011), flat
  `{"object": "error", "message", "type": "BadRequestError", "param": null, "code": 400}` before
  (curl output in vllm PR #17664).
- Gemini batchEmbedContents (ai.google.dev/api/embeddings): a body `{"requests": [{"model",
  "content": {"parts": [{"text"}]}, "taskType", "outputDimensionality"}]}` answered by
  `{"embeddings": [{"values": [...]}]}`; errors `{"error": {"code", "message", "status"}}`.

Modes: `shuffle` returns `data` in reverse order (OpenAI's `index` says which text each vector
is for); `fail(reply, ...)` queues whole replies (status, body, headers) for the next requests;
`refuse(text, ...)` answers every request carrying `text` with the provider's 400 for an input
over the model's context length (`openai_context_refusal`, `vllm_context_refusal`), whatever
else the request carries; `vector` replaces the vector function (a zero vector, a wrong
length). Every request is kept in `requests` (path, headers, JSON body).
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from doubles.loopback import LoopbackThread
from doubles.server_text import hashed_embedding


@dataclass
class Canned:
    """One scripted reply instead of embeddings."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def openai_rate_limited(retry_after: str = "1") -> Canned:
    """429 rate_limit_exceeded with Retry-After (OpenAI rate-limits guide)."""
    error = {
        "message": "Rate limit reached for text-embedding-3-small on requests per min (RPM).",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    return Canned(429, {"error": error}, {"retry-after": retry_after})


def openai_bad_request(message: str = "'input' is invalid", param: str | None = "input") -> Canned:
    """400 in OpenAI's error shape; `param` names the request field at fault."""
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    return Canned(400, {"error": error})


def openai_unauthorized(shown_key: str) -> Canned:
    """401 invalid_api_key, echoing the key as some OpenAI-compatible servers do."""
    error = {
        "message": f"Incorrect API key provided: {shown_key}.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
    return Canned(401, {"error": error})


def vllm_bad_request(message: str, *, legacy: bool = False) -> Canned:
    """vLLM's 400: nested like OpenAI's (>= 0.10.1) or flat (`legacy`)."""
    fields = {"message": message, "type": "BadRequestError", "param": None, "code": 400}
    return Canned(400, {"object": "error", **fields} if legacy else {"error": fields})


def openai_context_refusal(requested: int, limit: int = 8192) -> Canned:
    """OpenAI's 400 for an input over the embedding model's context length. The body is the
    error shape of OpenAI's error-codes guide (`{"error": {"message", "type", "param",
    "code"}}`); the message and `param`/`code` null are as OpenAI's /v1/embeddings sends them
    for text-embedding-3-* and ada-002 (quoted in many bug reports)."""
    error = {
        "message": f"This model's maximum context length is {limit} tokens, however you "
        f"requested {requested} tokens ({requested} in your prompt; 0 for the completion). "
        "Please reduce your prompt; or completion length.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    return Canned(400, {"error": error})


def vllm_context_refusal(requested: int, limit: int = 8192, *, legacy: bool = False) -> Canned:
    """vLLM's 400 for an input over `--max-model-len` on /v1/embeddings: the message its
    OpenAI-compatible server raises in `_validate_input` (vllm/entrypoints/openai/
    serving_engine.py), in the nested error shape of vLLM >= 0.10.1, or flat (`legacy`; see the
    module notes)."""
    return vllm_bad_request(
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{requested} tokens in the input for embedding generation. Please reduce the length "
        "of the input.",
        legacy=legacy,
    )


def server_error() -> Canned:
    return Canned(500, {"error": {"message": "internal error", "type": "server_error"}})


def gemini_rate_limited(delay: str = "1s") -> Canned:
    """RESOURCE_EXHAUSTED with a RetryInfo delay (Gemini API troubleshooting guide)."""
    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]
    error = {
        "code": 429,
        "message": "Resource has been exhausted (e.g. check quota).",
        "status": "RESOURCE_EXHAUSTED",
        "details": details,
    }
    return Canned(429, {"error": error})


class EmbeddingsServer(LoopbackThread):
    """The server; `with EmbeddingsServer() as server:` serves at `server.url` (ends in /v1)."""

    thread_name = "embeddings-server"

    def __init__(self, dim: int = 64):
        self.dim = dim
        self.shuffle = False
        #: the model the replies name (OpenAI's reply carries `model`): None names the one
        #: asked for; another name stands for a provider that re-routed the request
        self.answer_as: str | None = None
        self.vector: Callable[[str, int], list[float]] = hashed_embedding
        self.requests: list[dict[str, Any]] = []
        self._canned: list[Canned] = []
        #: texts refused in any request that carries them, with the refusal they get
        self._refused: dict[str, Callable[[int], Canned]] = {}
        self._thread = None
        self._loop = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def gemini_base(self) -> str:
        """The api_base for litellm's gemini/ provider (it posts to {base}/models/...)."""
        return f"http://127.0.0.1:{self._port}/v1beta"

    def fail(self, *replies: Canned) -> None:
        """Answer the next requests with these replies, in order."""
        self._canned.extend(replies)

    def refuse(self, text: str, refusal: Callable[[int], Canned] = vllm_context_refusal) -> None:
        """Refuse every request carrying `text` with `refusal(requested tokens)`, as a server
        refuses a request holding one input over its context length."""
        self._refused[text] = refusal

    def inputs(self) -> list[list[str]]:
        """The texts of every request, in arrival order."""
        return [request["texts"] for request in self.requests]

    async def astart(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._openai)
        app.router.add_post("/v1beta/models/{action}", self._gemini)
        self._port = await self.serve(app)
        return self.url

    def _record(self, http: web.Request, body: Any, texts: list[str]) -> Canned | None:
        self.requests.append(
            {"path": http.path, "headers": dict(http.headers), "body": body, "texts": texts}
        )
        return self._canned.pop(0) if self._canned else None

    async def _openai(self, http: web.Request) -> web.Response:
        body = await http.json()
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else list(raw or [])
        canned = self._record(http, body, texts) or self._refusal(texts)
        if canned is not None:
            return web.json_response(canned.body, status=canned.status, headers=canned.headers)
        if not texts or not all(isinstance(t, str) and t for t in texts):
            reply = openai_bad_request("'input' must be a non-empty string or array of strings")
            return web.json_response(reply.body, status=reply.status)
        dim = body.get("dimensions") or self.dim
        data = []
        for index, text in enumerate(texts):
            vector: Any = self.vector(text, dim)
            if body.get("encoding_format") == "base64":
                vector = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": vector})
        if self.shuffle:
            data.reverse()
        tokens = sum(len(text.split()) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        model = self.answer_as or body.get("model")
        reply = {"object": "list", "data": data, "model": model, "usage": usage}
        return web.json_response(reply)

    def _refusal(self, texts: list[str]) -> Canned | None:
        """The refusal of the first refused text the request carries, if any."""
        for text in texts:
            refusal = self._refused.get(text) if isinstance(text, str) else None
            if refusal is not None:
                return refusal(8192 + len(text.split()))
        return None

    async def _gemini(self, http: web.Request) -> web.Response:
        body = await http.json()
        requests = body.get("requests", [])
        texts = [part["text"] for r in requests for part in r["content"]["parts"]]
        canned = self._record(http, body, texts)
        if canned is not None:
            return web.json_response(canned.body, status=canned.status, headers=canned.headers)
        if not http.match_info["action"].endswith(":batchEmbedContents"):
            return web.json_response({"error": {"code": 404, "status": "NOT_FOUND"}}, status=404)
        embeddings = [
            {"values": self.vector(text, r.get("outputDimensionality") or self.dim)}
            for r, text in zip(requests, texts, strict=True)
        ]
        return web.json_response({"embeddings": embeddings})
