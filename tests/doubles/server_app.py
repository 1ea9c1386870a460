"""The fake OpenAI server's request handling: aiohttp handlers and fault decisions.

See `doubles.server` for the overview and the command line.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from doubles.server_answer import write_answer
from doubles.server_dialects import SERVERS, refusal
from doubles.server_draws import SeededDraws
from doubles.server_limits import TokenWindow, rpm_refusal, tpm_admit
from doubles.server_request import (
    HTTP_FAULTS,
    BadRequest,
    ChatRequest,
    Fault,
    Reply,
    Responder,
    ScriptExhausted,
    apply_content_fault,
    as_reply,
)
from doubles.server_scripts import build_responder, echo_responder, request_item
from doubles.server_stats import ServerStats, SlidingWindowLimiter
from doubles.server_text import hashed_embedding
from doubles.server_wire import (
    MALFORMED_BODY,
    bad_request,
    context_length_error,
    embeddings_body,
    error_response,
    fault_error,
    json_response,
    prompt_token_count,
    reset_connection,
    tokenize,
)
from titjudge.errors import ConfigError

log = logging.getLogger(__name__)
LOOPBACK = ("127.0.0.1", "localhost")
CHAT, EMBEDDINGS, MODELS = "/v1/chat/completions", "/v1/embeddings", "/v1/models"


@dataclass
class _Ctx:
    """What one request did, for the stats."""

    arrived: float
    fault: str | None = None
    body_hash: str | None = None
    reset: bool = False
    #: the request's entry in the tpm window ([arrival, tokens]), once admitted
    entry: list[float] | None = None
    #: (image sha256, prompt sha256) of the item a chat request is about
    item: tuple[str | None, str | None] = (None, None)


class FakeOpenAIApp(SeededDraws):
    """Configuration, decisions and request handlers; `server.FakeOpenAIServer` adds serving.

    - `responder`: a callable `(ChatRequest) -> Reply | Fault | str | dict | list` (may be
      async) or a built-in name: auto, echo, describe, judge.
    - `latency` + uniform `[0, jitter)` seconds are slept (asyncio) before every /v1 answer,
      so concurrent requests overlap; rpm rejections answer at once. With `latency_sigma`
      > 0, `latency` is the median of a seeded lognormal draw (see `SeededDraws`).
    - `fault_rate` of chat requests fail with a kind drawn from `faults` (embeddings draw
      only from the HTTP kinds); `retry_after` is the Retry-After of injected 429s and
      `timeout_delay` the stall of `timeout` faults.
    - `rpm` / `tpm`: at most that many requests per `rpm_window` / tokens per `tpm_window`
      seconds, 429 beyond (`doubles.server_limits`).
    - `context_window`: prompts with more (approximate) tokens get context_length_exceeded.
    - `api_key`: when set, other bearer keys get 401.
    A content fault (fenced, invalid_schema, prose) returned by the responder itself
    corrupts an echo of the user text, since there is no good reply to corrupt.
    """

    def __init__(
        self,
        responder: Responder | str = "auto",
        latency: float = 0.0,
        jitter: float = 0.0,
        fault_rate: float = 0.0,
        faults: Sequence[str] = ("429", "500", "503"),
        seed: int = 0,
        rpm: int | None = None,
        retry_after: float = 1.0,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        timeout_delay: float = 30.0,
        embedding_dim: int = 256,
        context_window: int | None = None,
        api_key: str | None = None,
        rpm_window: float = 60.0,
        tpm: int | None = None,
        tpm_window: float = 60.0,
        models: Sequence[str] = ("test-model",),
        latency_sigma: float = 0.0,
        server: str = "openai",
    ):
        if host not in LOOPBACK:
            raise ConfigError(
                f"fake server: host {host!r} is not loopback; it only binds 127.0.0.1"
            )
        if not 0.0 <= fault_rate <= 1.0:
            raise ConfigError(f"fake server: fault_rate must be in [0, 1], got {fault_rate}")
        if latency_sigma < 0:
            raise ConfigError(f"fake server: latency_sigma must be >= 0, got {latency_sigma}")
        for kind in faults:
            Fault(kind)  # validates the name
        if server not in SERVERS:
            raise ConfigError(f"fake server: server must be one of {SERVERS}, got {server!r}")
        #: whose structured-output dialect it speaks (`doubles.server_dialects`)
        self.server = server
        self.responder: Responder = (
            build_responder(responder) if isinstance(responder, str) else responder
        )
        self.latency, self.jitter = float(latency), float(jitter)
        self.latency_sigma = float(latency_sigma)
        self.fault_rate, self.faults, self.seed = float(fault_rate), tuple(faults), seed
        self.retry_after, self.timeout_delay = float(retry_after), float(timeout_delay)
        self.embedding_dim, self.context_window, self.api_key = (
            embedding_dim,
            context_window,
            api_key,
        )
        self.host, self.port = "127.0.0.1", port
        self.models = list(models)
        self.stats = ServerStats()
        self._limiter = SlidingWindowLimiter(rpm, rpm_window) if rpm else None
        self._tokens = TokenWindow(tpm, tpm_window) if tpm else None
        self._attempts: dict[str, int] = {}
        self._script: list[Reply] = []
        self._script_lock = threading.Lock()
        self._seq = 0

    # ------------------------------------------------------------------ public API

    def script(self, *replies: Reply | Fault | str | dict[str, Any] | list[Any]) -> None:
        """Queue replies (text, JSON, Reply or Fault) for the next chat requests, in arrival order."""
        coerced = [as_reply(r) for r in replies]
        with self._script_lock:
            self._script.extend(coerced)

    @property
    def scripted_remaining(self) -> int:
        with self._script_lock:
            return len(self._script)

    def reset_stats(self) -> None:
        self.stats.reset()

    def make_app(self) -> web.Application:
        """The aiohttp application: the OpenAI routes plus /health and /stats."""
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post(CHAT, self._counted(CHAT, self._chat))
        app.router.add_post(EMBEDDINGS, self._counted(EMBEDDINGS, self._embeddings))
        app.router.add_get(MODELS, self._counted(MODELS, self._models))
        app.router.add_get("/health", self._health)
        app.router.add_get("/stats", self._stats)
        return app

    # ------------------------------------------------------------------ decisions

    def _pop_script(self) -> Reply | None:
        with self._script_lock:
            return self._script.pop(0) if self._script else None

    # ------------------------------------------------------------------ handlers

    def _counted(
        self, endpoint: str, handler: Callable[[web.Request, _Ctx], Awaitable[web.StreamResponse]]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def wrapped(http: web.Request) -> web.StreamResponse:
            ctx = _Ctx(arrived=self.stats.begin(endpoint))
            status = 499
            try:
                response = await handler(http, ctx)
                status = 0 if ctx.reset else response.status
                return response
            finally:
                tokens = int(ctx.entry[1]) if ctx.entry is not None else None
                self.stats.finish(
                    endpoint, ctx.arrived, status, ctx.fault, ctx.body_hash, tokens, ctx.item
                )

        return wrapped

    async def _admit(
        self, http: web.Request, ctx: _Ctx
    ) -> tuple[dict[str, Any], int] | web.Response:
        """Parse the body, count the attempt, check the API key and the rpm limit."""
        try:
            body = json.loads(await http.read())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return error_response(400, f"We could not parse the JSON body of your request ({exc})")
        if not isinstance(body, dict):
            return error_response(400, "The request body must be a JSON object.")
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
        ctx.body_hash = hashlib.sha256(canonical.encode()).hexdigest()
        attempt = self._attempts[ctx.body_hash] = self._attempts.get(ctx.body_hash, 0) + 1
        if (
            self.api_key is not None
            and http.headers.get("Authorization") != f"Bearer {self.api_key}"
        ):
            return error_response(401, "Incorrect API key provided.", code="invalid_api_key")
        refused = rpm_refusal(self._limiter)
        if refused is not None:
            ctx.fault = "rpm"
            return refused
        model = body.get("model")
        if (
            isinstance(model, str)
            and model not in self.models
            and self.server != "llama_cpp_python"
        ):
            self.models.append(model)  # llama-cpp-python lists only what it loaded
        return body, attempt

    async def _http_fault(
        self, http: web.Request, ctx: _Ctx, fault: Fault, tokens: int
    ) -> web.StreamResponse | None:
        """Serve an HTTP-level fault; None means carry on and answer (after a `timeout` stall)."""
        ctx.fault = fault.kind
        if fault.kind == "timeout":
            await asyncio.sleep(fault.delay if fault.delay is not None else self.timeout_delay)
            return None
        if fault.kind == "reset":
            ctx.reset = True
            return reset_connection(http)
        if fault.kind == "malformed":
            return web.Response(status=200, text=MALFORMED_BODY, content_type="application/json")
        window = self.context_window or 8192
        retry = fault.retry_after if fault.retry_after is not None else self.retry_after
        status, body, headers = fault_error(
            fault.kind, fault.message, retry, max(tokens, window + 1), window
        )
        return json_response(status, body, headers)

    async def _chat(self, http: web.Request, ctx: _Ctx) -> web.StreamResponse:
        admitted = await self._admit(http, ctx)
        if isinstance(admitted, web.Response):
            return admitted
        body, attempt = admitted
        assert ctx.body_hash is not None
        scripted = self._pop_script()
        fault = (
            scripted.fault
            if scripted is not None
            else self._draw_fault(ctx.body_hash, attempt, self.faults)
        )
        delay = self._delay(ctx.body_hash, attempt) + (scripted.delay if scripted else 0.0)
        try:
            request = ChatRequest(body, attempt, ctx.body_hash, server=self.server)
        except BadRequest as exc:
            await asyncio.sleep(delay)
            return bad_request(exc)
        shape = refusal(self.server, body)
        if shape is not None:  # the server's own refusal of the request's response_format
            ctx.fault = "dialect"
            status, said = shape
            if isinstance(said, str):  # an axum extractor's text/plain rejection (TGI)
                return web.Response(status=status, text=said, content_type="text/plain")
            return json_response(status, said)
        ctx.item = request_item(self.responder, request)
        tokens = prompt_token_count(request)
        if self._tokens is not None:
            requested = tokens + (request.max_tokens or 0)
            ctx.entry, refused = tpm_admit(self._tokens, request.model, requested)
            if refused is not None:
                ctx.fault = "tpm"
                return refused
        await asyncio.sleep(delay)
        if fault is not None and fault.is_http:
            response = await self._http_fault(http, ctx, fault, tokens)
            if response is not None:
                return response
        if self.context_window is not None and tokens > self.context_window:
            ctx.fault = "context_length"
            return json_response(400, context_length_error(tokens, self.context_window))
        reply = scripted if scripted is not None and scripted.fault is None else None
        if reply is None:
            try:
                reply = await self._respond(request)
            except BadRequest as exc:
                return bad_request(exc)
            except ScriptExhausted as exc:
                ctx.fault = "script_exhausted"
                return error_response(500, f"fake server: {exc}", "server_error")
            except Exception as exc:  # a bug in a custom responder: a visible 500, not a hang
                log.exception("fake server: responder failed")
                ctx.fault = "responder_error"
                return error_response(500, f"fake server: responder raised {exc!r}", "server_error")
        if reply.fault is not None and reply.fault.is_http:  # the responder itself chose a fault
            response = await self._http_fault(http, ctx, reply.fault, tokens)
            if response is not None:
                return response
            reply = echo_responder(request)
        content_fault = next(
            (f for f in (fault, reply.fault) if f is not None and not f.is_http), None
        )
        if content_fault is not None:
            ctx.fault = content_fault.kind
            base = reply if reply.fault is None else echo_responder(request)
            reply = apply_content_fault(content_fault, base, request.json_schema)
        if reply.delay and reply is not scripted:  # a scripted delay was already slept
            await asyncio.sleep(reply.delay)
        return await self._answer(http, request, reply, tokens, ctx.entry)

    async def _respond(self, request: ChatRequest) -> Reply:
        result: Any = self.responder(request)
        if inspect.isawaitable(result):
            result = await result
        return as_reply(result)

    async def _answer(
        self,
        http: web.Request,
        request: ChatRequest,
        reply: Reply,
        tokens: int,
        entry: list[float] | None = None,
    ) -> web.StreamResponse:
        self._seq += 1
        completion_id = f"chatcmpl-fake{self._seq:08d}{request.body_hash[:12]}"
        return await write_answer(http, request, reply, tokens, completion_id, entry)

    async def _embeddings(self, http: web.Request, ctx: _Ctx) -> web.StreamResponse:
        admitted = await self._admit(http, ctx)
        if isinstance(admitted, web.Response):
            return admitted
        body, attempt = admitted
        assert ctx.body_hash is not None
        fault = self._draw_fault(
            ctx.body_hash, attempt, [k for k in self.faults if k in HTTP_FAULTS]
        )
        await asyncio.sleep(self._delay(ctx.body_hash, attempt))
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if (
            not isinstance(texts, list)
            or not texts
            or not all(isinstance(t, str) and t.strip() for t in texts)
        ):
            message = "'input' must be a non-empty string or array of non-empty strings"
            return error_response(400, message, param="input")
        dim = body.get("dimensions") or self.embedding_dim
        encoding = body.get("encoding_format") or "float"
        if not isinstance(dim, int) or dim < 1 or encoding not in ("float", "base64"):
            message = (
                "'dimensions' must be a positive integer and 'encoding_format' float or base64"
            )
            return error_response(400, message)
        tokens = sum(len(tokenize(t)) for t in texts)
        if fault is not None:
            response = await self._http_fault(http, ctx, fault, tokens)
            if response is not None:
                return response
        vectors = [hashed_embedding(t, dim) for t in texts]
        return json_response(
            200, embeddings_body(vectors, str(body.get("model", "")), encoding, tokens)
        )

    async def _models(self, http: web.Request, ctx: _Ctx) -> web.StreamResponse:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "titjudge-fake"}
            for m in self.models
        ]
        return json_response(200, {"object": "list", "data": data})

    async def _health(self, http: web.Request) -> web.StreamResponse:
        return json_response(200, {"status": "ok"})

    async def _stats(self, http: web.Request) -> web.StreamResponse:
        limit = http.query.get("records", "1000")
        return json_response(
            200, self.stats.snapshot(records=int(limit) if limit.isdigit() else 1000)
        )
