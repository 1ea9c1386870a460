"""OpenAI's Files and Batch endpoints on loopback, beside the fake chat server's own routes.

Shapes from OpenAI's Batch guide (https://developers.openai.com/api/docs/guides/batch) and
API reference (https://platform.openai.com/docs/api-reference/batch; the Batch object's
fields as in openai-python `src/openai/types/batch.py`):

- `POST /v1/files` (multipart: `purpose=batch`, `file`) -> a File object `{id, object:
  "file", bytes, created_at, filename, purpose}`; `GET /v1/files/{id}/content` -> its bytes.
- `POST /v1/batches` `{input_file_id, endpoint, completion_window: "24h", metadata}` -> a
  Batch object `{id, object: "batch", endpoint, errors, input_file_id, completion_window,
  status, output_file_id, error_file_id, created_at, ..., request_counts {total, completed,
  failed}, metadata}`; `GET /v1/batches/{id}` the same, later; `GET /v1/batches` a list
  `{object: "list", data, first_id, last_id, has_more}`.
- statuses: validating -> in_progress -> completed (or expired, failed).
- output file: one line per request that ran, `{id, custom_id, response: {status_code: 200,
  request_id, body: <chat.completion>}, error: null}`; error file: a request that failed,
  `{custom_id, response: {status_code: 400, body: {error: {message, type}}}, error: null}`,
  and one an expired batch never ran, `{custom_id, response: null, error: {code:
  "batch_expired", message: "This request could not be executed before the completion window
  expired."}}` ("Batch expiration").

Each line is answered by a second fake chat server (`engine`) with the same responder, so a
batch reply is what the online call would have got; the outer server's `stats` count only the
chat requests sent to it directly. `hold()` keeps every batch in progress until `release()`;
`plan(...)` shapes the next batch created: lines that fail, or an expiry after some lines.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, web

from doubles.server import FakeOpenAIServer

EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


@dataclass
class Plan:
    """What the next batch does: `fail` lines (by position) answered with a 400 error,
    `replace` lines whose reply text is replaced (an invalid answer), `expire_after` lines
    answered before it expires (None: it completes)."""

    fail: dict[int, str] = field(default_factory=dict)
    replace: dict[int, str] = field(default_factory=dict)
    expire_after: int | None = None


class BatchServer(FakeOpenAIServer):
    thread_name = "fake-openai-batch"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.engine = FakeOpenAIServer(self.responder)
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        #: POST /v1/batches received (each one a job created)
        self.batch_creates = 0
        self.lines_answered = 0
        #: the next this many GET /v1/batches/{id} answer 500 (an outage of the batch API)
        self.poll_failures = 0
        self._plans: list[Plan] = []
        self._held = threading.Event()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ test controls

    def plan(self, plan: Plan) -> None:
        with self._lock:
            self._plans.append(plan)

    def hold(self) -> None:
        self._held.set()

    def release(self) -> None:
        self._held.clear()

    def start(self) -> str:
        self.engine.start()
        return super().start()

    def stop(self) -> None:
        super().stop()
        self.engine.stop()

    # ------------------------------------------------------------------ routes

    def make_app(self) -> web.Application:
        app = super().make_app()
        app.router.add_post("/v1/files", self._create_file)
        app.router.add_get("/v1/files/{id}/content", self._file_content)
        app.router.add_get("/v1/files/{id}", self._file)
        app.router.add_post("/v1/batches", self._create_batch)
        app.router.add_get("/v1/batches", self._list_batches)
        app.router.add_get("/v1/batches/{id}", self._batch)
        return app

    async def _create_file(self, http: web.Request) -> web.Response:
        form = await http.post()
        upload = form.get("file")
        if upload is None or form.get("purpose") != "batch":
            return _error(400, "file and purpose=batch are required")
        data = upload.file.read() if hasattr(upload, "file") else str(upload).encode()
        file_id = f"file-{len(self.files) + 1:06d}"
        name = getattr(upload, "filename", "input.jsonl")
        return web.json_response(self._store(file_id, data, name, "batch"))

    def _store(self, file_id: str, data: bytes, name: str, purpose: str) -> dict[str, Any]:
        made = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id], self.contents[file_id] = made, data
        return made

    async def _file(self, http: web.Request) -> web.Response:
        found = self.files.get(http.match_info["id"])
        return web.json_response(found) if found else _error(404, "No such File object")

    async def _file_content(self, http: web.Request) -> web.Response:
        found = self.contents.get(http.match_info["id"])
        if found is None:
            return _error(404, "No such File object")
        return web.Response(body=found, content_type="application/octet-stream")

    async def _create_batch(self, http: web.Request) -> web.Response:
        body = await http.json()
        if body.get("input_file_id") not in self.contents:
            return _error(400, "input_file_id is not a file")
        if body.get("completion_window") != "24h":
            return _error(400, "completion_window must be 24h")
        with self._lock:
            self.batch_creates += 1
            plan = self._plans.pop(0) if self._plans else Plan()
            batch_id = f"batch_{self.batch_creates:06d}"
        lines = self.contents[body["input_file_id"]].decode().splitlines()
        self.batches[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body.get("endpoint"),
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": "24h",
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(time.time()),
            "in_progress_at": None,
            "expires_at": int(time.time()) + 86400,
            "completed_at": None,
            "expired_at": None,
            "failed_at": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
            "_plan": plan,
        }
        return web.json_response(_public(self.batches[batch_id]))

    async def _list_batches(self, http: web.Request) -> web.Response:
        data = [_public(b) for b in reversed(self.batches.values())]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": False,
            }
        )

    async def _batch(self, http: web.Request) -> web.Response:
        if self.poll_failures > 0:
            self.poll_failures -= 1
            return _error(500, "The server had an error while processing your request.")
        batch = self.batches.get(http.match_info["id"])
        if batch is None:
            return _error(404, "No such Batch object")
        if batch["status"] == "validating":
            batch["status"], batch["in_progress_at"] = "in_progress", int(time.time())
        elif batch["status"] == "in_progress" and not self._held.is_set():
            await self._run(batch)
        return web.json_response(_public(batch))

    async def _run(self, batch: dict[str, Any]) -> None:
        """Answer the batch's lines through the engine and write its output and error files."""
        plan: Plan = batch["_plan"]
        rows = [json.loads(t) for t in self.contents[batch["input_file_id"]].decode().splitlines()]
        out, errors = [], []
        async with ClientSession() as session:
            for n, row in enumerate(rows):
                if plan.expire_after is not None and n >= plan.expire_after:
                    errors.append(_expired(row))
                elif n in plan.fail:
                    errors.append(self._failed_line(row, plan.fail[n]))
                else:
                    out.append(await self._answer_line(session, row, plan.replace.get(n)))
        self.lines_answered += len(out)
        stamp = int(time.time())
        if out:
            made = self._store(
                f"file-out-{batch['id']}", _jsonl(out), "output.jsonl", "batch_output"
            )
            batch["output_file_id"] = made["id"]
        if errors:
            made = self._store(
                f"file-err-{batch['id']}", _jsonl(errors), "errors.jsonl", "batch_output"
            )
            batch["error_file_id"] = made["id"]
        batch["request_counts"] = {
            "total": len(rows),
            "completed": len(out),
            "failed": sum(1 for e in errors if e["error"] is None),
        }
        if plan.expire_after is not None:
            batch["status"], batch["expired_at"] = "expired", stamp
        else:
            batch["status"], batch["completed_at"] = "completed", stamp

    def _failed_line(self, row: dict[str, Any], message: str) -> dict[str, Any]:
        """The error file's line for a request the provider refused (a subclass's own shape)."""
        return _failed(row, message)

    async def _answer_line(
        self, session: ClientSession, row: dict[str, Any], text: str | None = None
    ) -> dict[str, Any]:
        # the line's `url` names the endpoint: chat completions, or embeddings
        path = (
            "/embeddings"
            if str(row.get("url", "")).endswith("/embeddings")
            else "/chat/completions"
        )
        async with session.post(f"{self.engine.url}{path}", json=row["body"]) as r:
            body = await r.json()
            status = r.status
        if text is not None:
            body["choices"][0]["message"]["content"] = text
        return {
            "id": f"batch_req_{row['custom_id']}",
            "custom_id": row["custom_id"],
            "response": {"status_code": status, "request_id": "req_fake", "body": body},
            "error": None,
        }


def _expired(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"batch_req_{row['custom_id']}",
        "custom_id": row["custom_id"],
        "response": None,
        "error": {"code": "batch_expired", "message": EXPIRED_MESSAGE},
    }


def _failed(row: dict[str, Any], message: str) -> dict[str, Any]:
    return {
        "id": f"batch_req_{row['custom_id']}",
        "custom_id": row["custom_id"],
        "response": {
            "status_code": 400,
            "request_id": "req_fake",
            "body": {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        },
        "error": None,
    }


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
        status=status,
    )


__all__ = ["EXPIRED_MESSAGE", "BatchServer", "Plan"]
