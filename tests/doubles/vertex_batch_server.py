"""Vertex AI (Gemini online and batch prediction), Cloud Storage and Google's OAuth token
endpoint on 127.0.0.1, for `litellm:vertex_ai/...` models given `api_base=server.url`.

Endpoints and shapes, from Google's docs:
- `POST /token`: a service account's JWT grant (`grant_type=urn:ietf:params:oauth:grant-type:
  jwt-bearer&assertion=...`) -> `{access_token, token_type: "Bearer", expires_in}`
  (https://developers.google.com/identity/protocols/oauth2/service-account#httprest); a
  service-account key file whose `token_uri` is `server.token_uri` gets its tokens here.
  Every other route wants `Authorization: Bearer <that token>`, else 401.
- `POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent`: the
  online call (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference).
- Cloud Storage JSON API: `POST /upload/storage/v1/b/{bucket}/o?uploadType=media&name=` ->
  an object resource `{kind: "storage#object", id, name, bucket, size, contentType,
  timeCreated}` (https://cloud.google.com/storage/docs/json_api/v1/objects/insert); `GET
  /storage/v1/b/{bucket}/o?prefix=` -> `{kind: "storage#objects", items}` (.../objects/list);
  `GET /storage/v1/b/{bucket}/o/{object}?alt=media` -> its bytes (.../objects/get).
- `POST /v1/projects/{p}/locations/{l}/batchPredictionJobs` `{displayName, model,
  inputConfig {instancesFormat: "jsonl", gcsSource {uris}}, outputConfig {predictionsFormat:
  "jsonl", gcsDestination {outputUriPrefix}}, labels}` -> a BatchPredictionJob `{name:
  "projects/{p}/locations/{l}/batchPredictionJobs/{id}", state: "JOB_STATE_PENDING", ...}`;
  `GET .../batchPredictionJobs/{id}` the same with `state`, `completionStats
  {successfulCount, failedCount, incompleteCount}`, `outputInfo {gcsOutputDirectory}`, `error
  {code, message}`; `GET .../batchPredictionJobs?filter=labels.k="v"` ->
  `{batchPredictionJobs}` (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/batch-prediction-api,
  https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.batchPredictionJobs).
- input lines `{"request": GenerateContentRequest}`; output `{gcsOutputDirectory}/
  predictions.jsonl`, a row per request that ran, in no set order (here: reversed): `{request,
  response, status: "" | <the error>, processed_time}`; a cancelled or expired job writes the
  rows it ran and no others
  (https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-from-cloud-storage).
- errors: `{"error": {code, message, status}}` (https://cloud.google.com/apis/design/errors).

A line is answered as the online call is (`vertex_gemini.answer`, the same responder), so a
batch reply is what the online call would get. `plan(...)` shapes the next job: lines that
fail (their `status` text), or an end (`cancelled` / `expired`) after some lines;
`hold()` keeps jobs running until `release()`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from doubles.loopback import LoopbackThread
from doubles.server_request import Responder
from doubles.vertex_gemini import answer, body_hash

TOKEN = "ya29.loopback-vertex-test-token"
STATS_COUNTS = ("successfulCount", "failedCount", "incompleteCount")


@dataclass
class Plan:
    """What the next job does: `fail` lines (by position) with that status text; `end`
    ("cancelled" or "expired") after `run` lines, the rest never run."""

    fail: dict[int, str] = field(default_factory=dict)
    end: str | None = None
    run: int = 0


def _error(status: int, message: str, kind: str) -> web.Response:
    body = {"error": {"code": status, "message": message, "status": kind}}
    return web.json_response(body, status=status)


class VertexBatchServer(LoopbackThread):
    thread_name = "fake-vertex-batch"

    def __init__(self, responder: Responder):
        self._thread = None
        self._loop = None
        self._port = 0
        self.responder = responder
        self.objects: dict[tuple[str, str], bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.batch_creates = 0
        self.lines_answered = 0
        #: generateContent calls answered online, and the hashes of their bodies / the lines'
        self.online = 0
        self.online_bodies: list[str] = []
        self.batch_bodies: list[str] = []
        self.tokens = 0
        self._plans: list[Plan] = []
        self._held = threading.Event()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ test controls

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def token_uri(self) -> str:
        return f"{self.url}/token"

    def plan(self, plan: Plan) -> None:
        with self._lock:
            self._plans.append(plan)

    def hold(self) -> None:
        self._held.set()

    def release(self) -> None:
        self._held.clear()

    # ------------------------------------------------------------------ serving

    async def astart(self) -> str:
        app = web.Application(middlewares=[self._auth], client_max_size=1 << 30)
        jobs = "/v1/projects/{p}/locations/{l}/batchPredictionJobs"
        app.router.add_post("/token", self._token)
        app.router.add_post(
            "/v1/projects/{p}/locations/{l}/publishers/google/models/{call}", self._generate
        )
        app.router.add_post("/upload/storage/v1/b/{bucket}/o", self._upload)
        app.router.add_get("/storage/v1/b/{bucket}/o", self._list_objects)
        app.router.add_get("/storage/v1/b/{bucket}/o/{name:.+}", self._object)
        app.router.add_post(jobs, self._create_job)
        app.router.add_get(jobs, self._list_jobs)
        app.router.add_get(jobs + "/{id}", self._job)
        self._port = await self.serve(app)
        return self.url

    @web.middleware
    async def _auth(self, http: web.Request, handler: Any) -> web.StreamResponse:
        if http.path != "/token" and http.headers.get("Authorization") != f"Bearer {TOKEN}":
            return _error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
        return await handler(http)

    async def _token(self, http: web.Request) -> web.Response:
        form = await http.post()
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        self.tokens += 1
        return web.json_response(
            {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}
        )

    async def _generate(self, http: web.Request) -> web.Response:
        model, _, method = http.match_info["call"].partition(":")
        if method != "generateContent":
            return _error(404, f"method {method} not served here", "NOT_FOUND")
        request = await http.json()
        self.online += 1
        self.online_bodies.append(body_hash(request))
        return web.json_response(await answer(self.responder, request, model))

    # ------------------------------------------------------------------ Cloud Storage

    def _resource(self, bucket: str, name: str) -> dict[str, Any]:
        data = self.objects[(bucket, name)]
        return {
            "kind": "storage#object",
            "id": f"{bucket}/{name}/1",
            "name": name,
            "bucket": bucket,
            "generation": "1",
            "size": str(len(data)),
            "contentType": "application/jsonl",
            "timeCreated": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        }

    async def _upload(self, http: web.Request) -> web.Response:
        name = http.query.get("name")
        if http.query.get("uploadType") != "media" or not name:
            return _error(400, "uploadType=media and name are required", "INVALID_ARGUMENT")
        bucket = http.match_info["bucket"]
        self.objects[(bucket, name)] = await http.read()
        return web.json_response(self._resource(bucket, name))

    async def _list_objects(self, http: web.Request) -> web.Response:
        bucket, prefix = http.match_info["bucket"], http.query.get("prefix", "")
        items = [
            self._resource(b, name)
            for (b, name) in sorted(self.objects)
            if b == bucket and name.startswith(prefix)
        ]
        return web.json_response({"kind": "storage#objects", "items": items})

    async def _object(self, http: web.Request) -> web.Response:
        key = (http.match_info["bucket"], http.match_info["name"])
        if key not in self.objects:
            return _error(404, f"No such object: {key[0]}/{key[1]}", "NOT_FOUND")
        if http.query.get("alt") != "media":
            return web.json_response(self._resource(*key))
        return web.Response(body=self.objects[key], content_type="application/octet-stream")

    # ------------------------------------------------------------------ batch prediction

    async def _create_job(self, http: web.Request) -> web.Response:
        body = await http.json()
        uris = (body.get("inputConfig") or {}).get("gcsSource", {}).get("uris") or []
        bucket, _, name = (uris[0] if uris else "").removeprefix("gs://").partition("/")
        if (bucket, name) not in self.objects:
            return _error(400, f"Input file not found: {uris}", "INVALID_ARGUMENT")
        with self._lock:
            self.batch_creates += 1
            plan = self._plans.pop(0) if self._plans else Plan()
            job_id = str(1000 + self.batch_creates)
        p, loc = http.match_info["p"], http.match_info["l"]
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        job = {
            **body,
            "name": f"projects/{p}/locations/{loc}/batchPredictionJobs/{job_id}",
            "state": "JOB_STATE_PENDING",
            "createTime": now,
            "updateTime": now,
        }
        self.jobs[job["name"]] = job
        job["_plan"], job["_input"] = plan, (bucket, name)
        return web.json_response(_public(job))

    async def _list_jobs(self, http: web.Request) -> web.Response:
        wanted = dict(re.findall(r'labels\.(\w+)="([^"]*)"', http.query.get("filter", "")))
        found = [
            _public(job)
            for job in self.jobs.values()
            if all((job.get("labels") or {}).get(k) == v for k, v in wanted.items())
        ]
        return web.json_response({"batchPredictionJobs": found})

    async def _job(self, http: web.Request) -> web.Response:
        name = http.path.removeprefix("/v1/")
        job = self.jobs.get(name)
        if job is None:
            return _error(404, f"BatchPredictionJob {name} not found", "NOT_FOUND")
        if self._held.is_set():
            job["state"] = "JOB_STATE_RUNNING"
        elif job["state"] in ("JOB_STATE_PENDING", "JOB_STATE_RUNNING"):
            await self._run(job)
        return web.json_response(_public(job))

    async def _run(self, job: dict[str, Any]) -> None:
        """Answer the job's lines as its plan says and write its predictions file."""
        plan: Plan = job["_plan"]
        lines = [json.loads(t) for t in self.objects[job["_input"]].decode().splitlines() if t]
        model = str(job.get("model", "")).rsplit("/", 1)[-1]
        ran = lines if plan.end is None else lines[: plan.run]
        rows, failed = [], 0
        for index, line in enumerate(ran):
            request = line["request"]
            self.batch_bodies.append(body_hash(request))
            row: dict[str, Any] = {"request": request, "status": "", "processed_time": _now()}
            if index in plan.fail:
                row["status"], failed = plan.fail[index], failed + 1
            else:
                row["response"] = await answer(self.responder, request, model)
                self.lines_answered += 1
            rows.append(row)
        prefix = job["outputConfig"]["gcsDestination"]["outputUriPrefix"].rstrip("/")
        directory = f"{prefix}/prediction-model-{job['name'].rsplit('/', 1)[-1]}"
        bucket, _, folder = directory.removeprefix("gs://").partition("/")
        text = "".join(json.dumps(r) + "\n" for r in reversed(rows))
        self.objects[(bucket, f"{folder}/predictions.jsonl")] = text.encode()
        job["outputInfo"] = {"gcsOutputDirectory": directory}
        counts = (len(ran) - failed, failed, len(lines) - len(ran))
        job["completionStats"] = {k: str(n) for k, n in zip(STATS_COUNTS, counts, strict=True)}
        if plan.end is None:
            job["state"] = "JOB_STATE_PARTIALLY_SUCCEEDED" if failed else "JOB_STATE_SUCCEEDED"
        else:
            job["state"] = f"JOB_STATE_{plan.end.upper()}"
            job["error"] = {"code": 1, "message": f"The batch prediction job was {plan.end}."}
        job["updateTime"] = _now()


def _public(job: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in job.items() if not k.startswith("_")}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


__all__ = ["TOKEN", "Plan", "VertexBatchServer"]
