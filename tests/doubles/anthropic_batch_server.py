"""Anthropic's Messages and Message Batches endpoints on loopback (127.0.0.1).

Shapes from Anthropic's batch guide
(https://platform.claude.com/docs/en/build-with-claude/batch-processing) and API reference:

- `POST /v1/messages/batches` `{"requests": [{"custom_id", "params"}]}`, 1 to 100,000
  requests, each `custom_id` unique and matching `^[a-zA-Z0-9_-]{1,64}$`, else a 400
  (https://platform.claude.com/docs/en/api/typescript/beta/messages/batches/create.md); the
  beta features of its lines are named in the creation's `anthropic-beta` header
  (https://github.com/anthropics/anthropic-sdk-python/issues/1118).
- the Message Batch `{id: "msgbatch_...", type: "message_batch", processing_status:
  in_progress | canceling | ended, request_counts {processing, succeeded, errored, canceled,
  expired}, ended_at, created_at, expires_at (24 h later), archived_at, cancel_initiated_at,
  results_url (null until ended)}`, times in RFC 3339; `GET /v1/messages/batches/{id}`
  (https://platform.claude.com/docs/zh-CN/api/retrieving-message-batches).
- `GET /v1/messages/batches?limit=&before_id=&after_id=`: `{data, has_more, first_id,
  last_id}`, the newest first, `limit` 1 to 1000, default 20
  (https://docs.anthropic.com/en/api/listing-message-batches).
- `GET {results_url}`: JSONL, `{"custom_id", "result": {"type": "succeeded", "message"} |
  {"type": "errored", "error": {"type": "error", "error": {"type", "message"}}} | {"type":
  "canceled"} | {"type": "expired"}}` (https://docs.claude.com/de/api/retrieving-message-batch-results;
  anthropic-sdk-python `MessageBatchErroredResult.error: ErrorResponse`).
- every request carries `x-api-key` and `anthropic-version`; errors are `{"type": "error",
  "error": {"type", "message"}}` (https://docs.claude.com/en/api/errors).

`POST /v1/messages` answers online; a batch line is answered by the very same function
(`doubles.anthropic_messages.answer_messages`), with the betas its batch was created with. The
first look at a batch (unless `hold()`) runs it to its end; `plan(...)` shapes the next batch
created: lines that fail, lines whose text is replaced, an expiry after some lines.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from doubles.anthropic_messages import Answer, answer_messages, error
from doubles.loopback import LoopbackThread
from doubles.server_request import Responder

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REQUESTS = 100_000


@dataclass
class Plan:
    """What the next batch does: `fail` lines (by position) errored with the message given,
    `replace` lines whose reply text is replaced, `expire_after` lines answered before it
    expires (None: it completes)."""

    fail: dict[int, str] = field(default_factory=dict)
    replace: dict[int, str] = field(default_factory=dict)
    expire_after: int | None = None


def _rfc3339(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class AnthropicBatchServer(LoopbackThread):
    thread_name = "fake-anthropic-batch"

    def __init__(self, responder: Responder, *, cache_read: int = 0, key: str | None = None):
        self.responder = responder
        self.cache_read = cache_read
        #: the one key accepted (None: any)
        self.key = key
        self.host, self.port = "127.0.0.1", 0
        #: bodies of POST /v1/messages (online calls), in order
        self.online: list[dict[str, Any]] = []
        #: each batch creation accepted: its `anthropic-beta` names and its requests
        self.creates: list[dict[str, Any]] = []
        self.batches: dict[str, dict[str, Any]] = {}
        self.lines_answered = 0
        #: the next this many GET /v1/messages/batches/{id} answer 500 (an outage)
        self.poll_failures = 0
        #: every x-api-key received (the key must go in that header, and only there)
        self.keys: set[str] = set()
        self._plans: list[Plan] = []
        self._held = threading.Event()
        self._lock = threading.Lock()
        self._runner: web.AppRunner | None = None
        self._thread = None
        self._loop = None

    @property
    def batch_creates(self) -> int:
        return len(self.creates)

    # ------------------------------------------------------------------ test controls

    def plan(self, plan: Plan) -> None:
        with self._lock:
            self._plans.append(plan)

    def hold(self) -> None:
        self._held.set()

    def release(self) -> None:
        self._held.clear()

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        if self._runner is None:
            raise RuntimeError("the Anthropic double is not running")
        return f"http://{self.host}:{self.port}"

    async def astart(self) -> str:
        app = web.Application(client_max_size=300 * 1024 * 1024)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/batches", self._create)
        app.router.add_get("/v1/messages/batches", self._list)
        app.router.add_get("/v1/messages/batches/{id}", self._retrieve)
        app.router.add_get("/v1/messages/batches/{id}/results", self._results)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        return self.url

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ routes

    def _refused(self, http: web.Request) -> web.Response | None:
        key = http.headers.get("x-api-key")
        if not key:
            return _render(error(401, "authentication_error", "x-api-key header is required"))
        self.keys.add(key)
        if self.key is not None and key != self.key:
            return _render(error(401, "authentication_error", "invalid x-api-key"))
        if not http.headers.get("anthropic-version"):
            return _render(
                error(400, "invalid_request_error", "anthropic-version: header is required")
            )
        return None

    async def _messages(self, http: web.Request) -> web.Response:
        refused = self._refused(http)
        if refused is not None:
            return refused
        params = await http.json()
        self.online.append(params)
        return _render(
            answer_messages(self.responder, params, _betas(http), cache_read=self.cache_read)
        )

    async def _create(self, http: web.Request) -> web.Response:
        refused = self._refused(http)
        if refused is not None:
            return refused
        body = await http.json()
        problem = _invalid_batch(body)
        if problem is not None:
            return _render(error(400, "invalid_request_error", problem))
        now = time.time()
        with self._lock:
            plan = self._plans.pop(0) if self._plans else Plan()
            self.creates.append({"betas": _betas(http), "requests": body["requests"]})
            batch_id = f"msgbatch_{len(self.creates):024d}"
            self.batches[batch_id] = {
                "id": batch_id,
                "type": "message_batch",
                "processing_status": "in_progress",
                "request_counts": {
                    "processing": len(body["requests"]),
                    "succeeded": 0,
                    "errored": 0,
                    "canceled": 0,
                    "expired": 0,
                },
                "ended_at": None,
                "created_at": _rfc3339(now),
                "expires_at": _rfc3339(now + 86400),
                "archived_at": None,
                "cancel_initiated_at": None,
                "results_url": None,
                "_plan": plan,
                "_betas": _betas(http),
                "_requests": body["requests"],
                "_results": None,
            }
        return web.json_response(_public(self.batches[batch_id]))

    async def _list(self, http: web.Request) -> web.Response:
        refused = self._refused(http)
        if refused is not None:
            return refused
        try:
            limit = int(http.query.get("limit", 20))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 1000:
            return _render(error(400, "invalid_request_error", "limit: must be from 1 to 1000"))
        ids = list(reversed(self.batches))  # the newest first
        if "after_id" in http.query and http.query["after_id"] in ids:
            ids = ids[ids.index(http.query["after_id"]) + 1 :]
        elif "before_id" in http.query and http.query["before_id"] in ids:
            ids = ids[: ids.index(http.query["before_id"])][-limit:]
        page = ids[:limit]
        return web.json_response(
            {
                "data": [_public(self.batches[i]) for i in page],
                "has_more": len(ids) > len(page),
                "first_id": page[0] if page else None,
                "last_id": page[-1] if page else None,
            }
        )

    async def _retrieve(self, http: web.Request) -> web.Response:
        refused = self._refused(http)
        if refused is not None:
            return refused
        if self.poll_failures > 0:
            self.poll_failures -= 1
            return _render(error(500, "api_error", "Internal server error"))
        batch = self.batches.get(http.match_info["id"])
        if batch is None:
            return _render(error(404, "not_found_error", "message batch not found"))
        if batch["processing_status"] == "in_progress" and not self._held.is_set():
            self._run(batch)
        return web.json_response(_public(batch))

    async def _results(self, http: web.Request) -> web.Response:
        refused = self._refused(http)
        if refused is not None:
            return refused
        batch = self.batches.get(http.match_info["id"])
        if batch is None:
            return _render(error(404, "not_found_error", "message batch not found"))
        if batch["_results"] is None:
            return _render(
                error(400, "invalid_request_error", "the batch has not ended: no results yet")
            )
        text = "".join(json.dumps(row) + "\n" for row in batch["_results"])
        return web.Response(text=text, content_type="application/x-jsonl")

    def _run(self, batch: dict[str, Any]) -> None:
        """Answer the batch's lines (as POST /v1/messages would) and end it."""
        plan: Plan = batch["_plan"]
        results: list[dict[str, Any]] = []
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        for n, request in enumerate(batch["_requests"]):
            if plan.expire_after is not None and n >= plan.expire_after:
                result: dict[str, Any] = {"type": "expired"}
            elif n in plan.fail:
                failed = error(400, "invalid_request_error", plan.fail[n]).body
                result = {"type": "errored", "error": failed}
            else:
                answer = answer_messages(
                    self.responder,
                    request["params"],
                    batch["_betas"],
                    replace=plan.replace.get(n),
                    cache_read=self.cache_read,
                )
                if answer.status == 200:
                    result = {"type": "succeeded", "message": answer.body}
                    self.lines_answered += 1
                else:
                    result = {"type": "errored", "error": answer.body}
            counts[result["type"]] += 1
            results.append({"custom_id": request["custom_id"], "result": result})
        batch["_results"] = results
        batch["request_counts"] = counts
        batch["processing_status"] = "ended"
        batch["ended_at"] = _rfc3339(time.time())
        batch["results_url"] = f"{self.url}/v1/messages/batches/{batch['id']}/results"


def _invalid_batch(body: Any) -> str | None:
    """Why the API refuses a batch creation, or None."""
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_REQUESTS:
        return f"requests: must be a list of 1 to {MAX_REQUESTS} requests"
    seen: set[str] = set()
    for n, request in enumerate(requests):
        custom_id = request.get("custom_id") if isinstance(request, dict) else None
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
            return f"requests.{n}.custom_id: String should match pattern '{CUSTOM_ID.pattern}'"
        if custom_id in seen:
            return f"requests.{n}.custom_id: custom_id {custom_id!r} is not unique in the batch"
        seen.add(custom_id)
        if not isinstance(request.get("params"), dict):
            return f"requests.{n}.params: Field required"
        extra = set(request) - {"custom_id", "params"}
        if extra:
            return f"requests.{n}.{sorted(extra)[0]}: Extra inputs are not permitted"
    return None


def _betas(http: web.Request) -> set[str]:
    found = ",".join(http.headers.getall("anthropic-beta", []))
    return {b.strip() for b in found.split(",") if b.strip()}


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def _render(answer: Answer) -> web.Response:
    return web.json_response(answer.body, status=answer.status)


__all__ = ["AnthropicBatchServer", "Plan"]
