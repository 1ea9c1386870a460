"""The Gemini Developer API's File and Batch endpoints on loopback, beside the provider
stand-in's own generateContent route (tests/conformance/provider_server.py).

Shapes from the Batch API guide (https://ai.google.dev/gemini-api/docs/batch-api), its
reference (https://ai.google.dev/api/batch-api) and the Files guide
(https://ai.google.dev/gemini-api/docs/files):

- `POST /upload/v1beta/files` with `X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command:
  start` (and `X-Goog-Upload-Header-Content-Length`) answers an upload URL in the
  `X-Goog-Upload-URL` header; the bytes posted there with `X-Goog-Upload-Command: upload,
  finalize` and `X-Goog-Upload-Offset: 0` answer `{"file": {name: "files/...", displayName,
  mimeType, sizeBytes, createTime, updateTime, expirationTime, sha256Hash, uri, state:
  "ACTIVE", source: "UPLOADED"}}`;
- `POST /v1beta/models/{model}:batchGenerateContent` `{"batch": {"display_name",
  "input_config": {"file_name"}}}` answers an Operation `{name: "batches/...", metadata:
  GenerateContentBatch {"@type", name, model, displayName, inputConfig, createTime,
  updateTime, batchStats, state}}`; `GET /v1beta/batches/{id}` the same Operation later, with
  `done: true` and `response` `{"@type", responsesFile}` (also `metadata.output`) once it
  succeeded; `GET /v1beta/batches` lists them (here in the order they were made, two a page
  unless `pageSize` says otherwise) as `{"operations", "nextPageToken"}` (`pageToken`);
- states BATCH_STATE_PENDING -> RUNNING -> SUCCEEDED (or EXPIRED: "will not have any results");
  batchStats counts are int64, written as strings (proto3 JSON);
- `GET /download/v1beta/files/{id}:download?alt=media`: the responses file, one line per
  request with its `key` and either `response` (a GenerateContentResponse) or a status object
  (google.rpc.Status `{code, message}`) under `error` (or `status`, `Plan.fail_field`);
- every error is Google's body `{"error": {"code", "message", "status"}}`; a request without
  `x-goog-api-key` is refused (403 PERMISSION_DENIED) and one with `?key=` is counted
  (`keys_in_urls`), so a test can assert the key never travels in a URL.

Each line is answered by a second stand-in (`engine`) exactly as the online generateContent
call is (`doubles.gemini_stand_in`: the same validation and the same replies), so a batch reply is what
the online call would have got; the outer server's `requests_for("gemini")` are only the online
calls. `hold()` keeps every job running until `release()`; `plan(...)` shapes the next job:
lines that fail, replies replaced, or an expiry.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, web

from doubles.gemini_stand_in import GeminiStandIn, RecordedRequest

_BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch"
_OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput"
_UNREGISTERED = (
    "Method doesn't allow unregistered callers (callers without established identity). "
    "Please use API Key or other form of API consumer identity to call this API."
)


@dataclass
class Plan:
    """What the next job does: `fail` lines (by position) answered with a status object
    under `fail_field`, `replace` lines whose reply text is replaced, `truncate` lines whose
    reply stopped at the token limit (finishReason MAX_TOKENS), or `expire` (no results)."""

    fail: dict[int, str] = field(default_factory=dict)
    replace: dict[int, str] = field(default_factory=dict)
    truncate: set[int] = field(default_factory=set)
    expire: bool = False
    fail_field: str = "error"


class GeminiBatchServer(GeminiStandIn):
    thread_name = "gemini-batch"

    def __init__(self, descriptions: dict[str, str] | None = None, **kwargs: Any):
        super().__init__(descriptions, **kwargs)
        self.engine = GeminiStandIn(descriptions)
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.batch_creates = 0
        self.lines_answered = 0
        #: the next this many GET /v1beta/batches/{id} answer 500
        self.poll_failures = 0
        #: requests to the File and Batch endpoints, and those with the key in the URL
        self.batch_requests: list[RecordedRequest] = []
        self.keys_in_urls = 0
        self._uploads: dict[str, dict[str, Any]] = {}
        self._plans: list[Plan] = []
        self._held = threading.Event()
        self._batch_lock = threading.Lock()

    # ------------------------------------------------------------------ test controls

    def plan(self, plan: Plan) -> None:
        with self._batch_lock:
            self._plans.append(plan)

    def decoy(self, display_name: str) -> None:
        """A finished job made by someone else (listed before the run's own)."""
        name = f"batches/decoy{len(self.jobs):04d}"
        meta = {"@type": _BATCH_TYPE, "name": name, "displayName": display_name}
        self.jobs[name] = {
            "name": name,
            "done": True,
            "metadata": {**meta, "state": "BATCH_STATE_SUCCEEDED"},
        }

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

    # ------------------------------------------------------------------ serving

    async def astart(self) -> str:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/upload/v1beta/files", self._upload)
        app.router.add_post("/v1beta/models/{model}:batchGenerateContent", self._create)
        app.router.add_get("/v1beta/batches", self._list)
        app.router.add_get("/v1beta/batches/{id}", self._get)
        app.router.add_get("/download/v1beta/files/{id}:download", self._download)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        return self.url

    async def _admit(self, http: web.Request) -> web.Response | None:
        """Record the request; refuse one without a key (Google's 403)."""
        raw = await http.read()
        self.batch_requests.append(
            RecordedRequest(
                method=http.method,
                path=http.path,
                query=dict(http.query),
                headers=dict(http.headers),
                body=None,
                raw=f"<{len(raw)} bytes>",
                kind="batch",
                model=None,
            )
        )
        if "key" in http.query:
            self.keys_in_urls += 1
        if not http.headers.get("x-goog-api-key"):
            return google_error(403, "PERMISSION_DENIED", _UNREGISTERED)
        return None

    async def _upload(self, http: web.Request) -> web.Response:
        refused = await self._admit(http)
        if refused is not None:
            return refused
        command = http.headers.get("X-Goog-Upload-Command", "")
        if "upload_id" not in http.query:
            if http.headers.get("X-Goog-Upload-Protocol") != "resumable" or command != "start":
                return google_error(400, "INVALID_ARGUMENT", "resumable upload start expected")
            meta = (await http.json()).get("file") or {}
            upload_id = f"up-{len(self._uploads) + 1}"
            self._uploads[upload_id] = {
                "size": int(http.headers.get("X-Goog-Upload-Header-Content-Length", "-1")),
                "mime": http.headers.get("X-Goog-Upload-Header-Content-Type", ""),
                "name": meta.get("display_name") or meta.get("displayName") or "",
            }
            url = f"{self.url}/upload/v1beta/files?upload_id={upload_id}&upload_protocol=resumable"
            headers = {"X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active"}
            return web.Response(status=200, headers=headers)
        started = self._uploads.get(http.query["upload_id"])
        data = await http.read()
        parts = {p.strip() for p in command.split(",")}
        if started is None or parts != {"upload", "finalize"}:
            return google_error(400, "INVALID_ARGUMENT", "unknown upload or command")
        if http.headers.get("X-Goog-Upload-Offset") != "0" or len(data) != started["size"]:
            return google_error(400, "INVALID_ARGUMENT", "offset or size does not match")
        name = f"files/{hashlib.sha256(data).hexdigest()[:12]}-{len(self.files)}"
        self.contents[name] = data
        self.files[name] = _file(name, started["name"], started["mime"], data, self.url)
        return web.json_response(
            {"file": self.files[name]}, headers={"X-Goog-Upload-Status": "final"}
        )

    async def _create(self, http: web.Request) -> web.Response:
        refused = await self._admit(http)
        if refused is not None:
            return refused
        batch = (await http.json()).get("batch") or {}
        config = batch.get("input_config") or batch.get("inputConfig") or {}
        file_name = config.get("file_name") or config.get("fileName")
        if file_name not in self.contents:
            return google_error(400, "INVALID_ARGUMENT", f"File {file_name} not found.")
        with self._batch_lock:
            self.batch_creates += 1
            plan = self._plans.pop(0) if self._plans else Plan()
            name = f"batches/job{self.batch_creates:04d}"
        lines = self.contents[file_name].decode().splitlines()
        stamp = _now()
        self.jobs[name] = {
            "name": name,
            "metadata": {
                "@type": _BATCH_TYPE,
                "name": name,
                "model": f"models/{http.match_info['model']}",
                "displayName": batch.get("display_name") or batch.get("displayName"),
                "inputConfig": {"fileName": file_name},
                "createTime": stamp,
                "updateTime": stamp,
                "batchStats": {
                    "requestCount": str(len(lines)),
                    "pendingRequestCount": str(len(lines)),
                },
                "state": "BATCH_STATE_PENDING",
            },
            "_plan": plan,
        }
        return web.json_response(_public(self.jobs[name]))

    async def _list(self, http: web.Request) -> web.Response:
        refused = await self._admit(http)
        if refused is not None:
            return refused
        size = int(http.query.get("pageSize", "2"))  # small pages: a reader must follow them
        start = int(http.query.get("pageToken", "0") or 0)
        every = [_public(job) for job in self.jobs.values()]
        page: dict[str, Any] = {"operations": every[start : start + size]}
        if start + size < len(every):
            page["nextPageToken"] = str(start + size)
        return web.json_response(page)

    async def _get(self, http: web.Request) -> web.Response:
        refused = await self._admit(http)
        if refused is not None:
            return refused
        if self.poll_failures > 0:
            self.poll_failures -= 1
            return google_error(500, "INTERNAL", "An internal error has occurred.")
        job = self.jobs.get(f"batches/{http.match_info['id']}")
        if job is None:
            return google_error(404, "NOT_FOUND", "Requested entity was not found.")
        meta = job["metadata"]
        if meta["state"] == "BATCH_STATE_PENDING":
            meta["state"] = "BATCH_STATE_RUNNING"
        elif meta["state"] == "BATCH_STATE_RUNNING" and not self._held.is_set():
            await self._run(job)
        meta["updateTime"] = _now()
        return web.json_response(_public(job))

    async def _download(self, http: web.Request) -> web.Response:
        refused = await self._admit(http)
        if refused is not None:
            return refused
        found = self.contents.get(f"files/{http.match_info['id']}")
        if found is None or http.query.get("alt") != "media":
            return google_error(404, "NOT_FOUND", "Requested entity was not found.")
        return web.Response(body=found, content_type="application/octet-stream")

    # ------------------------------------------------------------------ running a job

    async def _run(self, job: dict[str, Any]) -> None:
        """Answer the job's lines through the engine and write its responses file."""
        plan: Plan = job["_plan"]
        meta = job["metadata"]
        meta["endTime"] = _now()
        job["done"] = True
        if plan.expire:  # "The job will not have any results to retrieve."
            meta["state"] = "BATCH_STATE_EXPIRED"
            return
        rows = [
            json.loads(t)
            for t in self.contents[meta["inputConfig"]["fileName"]].decode().splitlines()
        ]
        out, ok = [], 0
        async with ClientSession() as session:
            for n, row in enumerate(rows):
                if n in plan.fail:
                    out.append(
                        {"key": row["key"], plan.fail_field: {"code": 3, "message": plan.fail[n]}}
                    )
                    continue
                line = await self._answer_line(session, meta["model"], row, plan.replace.get(n))
                if n in plan.truncate and "response" in line:
                    line["response"]["candidates"][0]["finishReason"] = "MAX_TOKENS"
                ok += "response" in line
                out.append(line)
        self.lines_answered += ok
        name = f"files/batch-{meta['name'].split('/')[1]}-responses"
        data = "".join(json.dumps(r) + "\n" for r in out).encode()
        self.contents[name] = data
        self.files[name] = _file(name, "responses", "application/jsonl", data, self.url)
        output = {"@type": _OUTPUT_TYPE, "responsesFile": name}
        job["response"] = output
        meta["output"] = {"responsesFile": name}
        meta["state"] = "BATCH_STATE_SUCCEEDED"
        meta["batchStats"] = {
            "requestCount": str(len(rows)),
            "successfulRequestCount": str(ok),
            "failedRequestCount": str(len(rows) - ok),
        }

    async def _answer_line(
        self, session: ClientSession, model: str, row: dict[str, Any], text: str | None
    ) -> dict[str, Any]:
        url = f"{self.engine.gemini_base}/{model}:generateContent"
        headers = {"x-goog-api-key": "engine"}
        async with session.post(url, json=row["request"], headers=headers) as reply:
            body = await reply.json()
            status = reply.status
        if status != 200:  # what the API refused online is a failed line here
            return {"key": row["key"], "error": body.get("error")}
        if text is not None:
            parts = body["candidates"][0]["content"]["parts"]
            parts[-1]["text"] = text
        return {"key": row["key"], "response": body}


def google_error(code: int, status: str, message: str) -> web.Response:
    return web.json_response(
        {"error": {"code": code, "message": message, "status": status}}, status=code
    )


def _file(name: str, display: str, mime: str, data: bytes, url: str) -> dict[str, Any]:
    stamp = _now()
    return {
        "name": name,
        "displayName": display,
        "mimeType": mime,
        "sizeBytes": str(len(data)),
        "createTime": stamp,
        "updateTime": stamp,
        "expirationTime": stamp,
        "sha256Hash": hashlib.sha256(data).hexdigest(),
        "uri": f"{url}/v1beta/{name}",
        "state": "ACTIVE",
        "source": "UPLOADED",
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def _public(job: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in job.items() if not k.startswith("_")}


__all__ = ["GeminiBatchServer", "Plan", "google_error"]
