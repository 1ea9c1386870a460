"""Vertex AI batch prediction for a `litellm:vertex_ai/gemini-...` model (`batch: true`).

Sent directly over HTTP (httpx), not through litellm's vertex_ai files and batches functions:
litellm reads a job's results from a hard-coded `https://storage.googleapis.com/...`
(litellm/llms/vertex_ai/files/transformation.py, `transform_file_content_request`), which no
`api_base` reaches, and it rebuilds each request from an OpenAI-shaped line with its own batch
transformation. Here each line's request is litellm's own body for the online call
(`models.litellm.raw`), and the Google OAuth token is litellm's own (`VertexBase`, the same
credentials the online call uses: `params.vertex_credentials`, VERTEXAI_CREDENTIALS or
Application Default Credentials; google-auth, as for any `vertex_ai/` call).

Shapes, from Google's docs:
- input: JSONL in Cloud Storage, one `{"request": GenerateContentRequest}` per line
  (https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-from-cloud-storage);
  uploaded with the JSON API's simple upload, `POST /upload/storage/v1/b/{bucket}/o?
  uploadType=media&name=...` (https://cloud.google.com/storage/docs/json_api/v1/objects/insert).
- a job: `POST https://{location}-aiplatform.googleapis.com/v1/projects/{p}/locations/{l}/
  batchPredictionJobs` `{displayName, model: "publishers/google/models/{m}", inputConfig:
  {instancesFormat: "jsonl", gcsSource: {uris}}, outputConfig: {predictionsFormat: "jsonl",
  gcsDestination: {outputUriPrefix}}, labels}`; `GET .../batchPredictionJobs/{id}` gives its
  `state` (JOB_STATE_*), `outputInfo.gcsOutputDirectory`, `completionStats`, `error`; the
  list takes `filter=labels.key="value"`
  (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/batch-prediction-api,
  https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.batchPredictionJobs).
- output: `predictions.jsonl` files under the output directory, one row per request that ran:
  the `request` as sent, `response` (GenerateContentResponse), `status` (empty on success,
  the error otherwise) and `processed_time`, in no set order; rows a job never ran (cancelled,
  expired) are absent, and are sent again. Read with objects.list and `?alt=media`
  (https://cloud.google.com/storage/docs/json_api/v1/objects/list, .../objects/get).
- Vertex keeps no custom id: each line's id rides in the request's `labels` (a label Vertex
  accepts on generateContent and echoes back in the output row's `request`; litellm does the
  same), the one difference between a line's request and the online body.
- limits: 200,000 requests per job, an input file of 1 GB
  (https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-gemini).

A reply costs litellm's batch price for the model (`batch_cost_calculator`: its `_batches`
rates, else half the list price), or unknown where litellm does not price it.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any
from urllib.parse import quote

from titjudge.files import jsonl_lines
from titjudge.models.core.base import Generation, PermanentError
from titjudge.models.core.batch import JobState, LineResult
from titjudge.models.litellm.batch.http import BatchHTTP, google_said
from titjudge.models.litellm.batch.price import batch_cost
from titjudge.models.litellm.batch.site import BatchSite
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.reply import generation_from
from titjudge.safety import redact, register_secret

VERTEX_MAX_REQUESTS = 200_000
VERTEX_MAX_BYTES = 1_000_000_000
#: the request label that carries a line's custom_id (lowercase, digits, `_` and `-` only)
LABEL = "titjudge_custom_id"
#: the model's `params` key naming the bucket (litellm's own name for it)
BUCKET_PARAM = "gcs_bucket_name"
GCS = "https://storage.googleapis.com"
#: Vertex's job states as OpenAI batch statuses (litellm's vertex_ai batches mapping)
STATES = {
    "JOB_STATE_QUEUED": "validating",
    "JOB_STATE_PENDING": "validating",
    "JOB_STATE_RUNNING": "in_progress",
    "JOB_STATE_PAUSED": "in_progress",
    "JOB_STATE_UPDATING": "in_progress",
    "JOB_STATE_SUCCEEDED": "completed",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "completed",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_UNSPECIFIED": "failed",
    "JOB_STATE_CANCELLING": "cancelling",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}


class VertexBatchAPI(BatchHTTP):
    """Cloud Storage and the batchPredictionJobs endpoint of one Vertex AI Gemini model."""

    api_name = "Vertex AI batch"

    max_requests = VERTEX_MAX_REQUESTS
    max_bytes = VERTEX_MAX_BYTES

    def __init__(self, site: BatchSite):
        from litellm.llms.vertex_ai.vertex_llm_base import VertexBase

        super().__init__(site)
        model, params, api_base = site.model, site.params, site.api_base
        self._params = dict(params)
        bucket, _, prefix = str(params.get(BUCKET_PARAM) or "").partition("/")
        if not bucket:
            raise PermanentError(f"batch on Vertex AI needs params.{BUCKET_PARAM}")
        self._bucket = bucket
        self._prefix = "/".join(p for p in (prefix.strip("/"), "titjudge-batch") if p)
        self._auth = VertexBase()
        self._location = VertexBase.get_vertex_region(
            VertexBase.safe_get_vertex_ai_location(self._params), model
        )
        root = (api_base or "").rstrip("/")
        for version in ("/v1", "/v1beta1"):
            root = root.removesuffix(version)
        if root:
            self._aiplatform, self._gcs = root, root  # one base for both, as litellm uploads
        else:
            from litellm.llms.vertex_ai.common_utils import get_vertex_base_url

            self._aiplatform, self._gcs = get_vertex_base_url(self._location).rstrip("/"), GCS

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        labels = {**(body.get("labels") or {}), LABEL: custom_id}
        return {"request": {**body, "labels": labels}}

    # ---------------------------------------------------------------- the endpoints

    async def _token(self) -> tuple[str, str]:
        credentials = self._auth.safe_get_vertex_ai_credentials(self._params)
        project = self._auth.safe_get_vertex_ai_project(self._params)
        try:
            token, project = await self._auth.get_access_token_async(credentials, project)
        except ImportError as exc:
            raise PermanentError(str(exc), lasting="missing client package google.auth") from exc
        except Exception as exc:
            reason = redact(f"Google credentials: {type(exc).__name__}: {exc}")
            raise PermanentError(reason) from exc
        register_secret(token)
        return token, project

    async def _send(
        self,
        method: str,
        url: str,
        *,
        json_body: Any = None,
        content: bytes | None = None,
        params: dict[str, str] | None = None,
    ) -> Any:
        """One request with the Google access token (`BatchHTTP.exchange`)."""
        token, _ = await self._token()
        headers = {"Authorization": f"Bearer {token}"}
        if content is not None:
            headers["Content-Type"] = "application/jsonl"
        return await self.exchange(
            method, url, headers=headers, json=json_body, content=content, params=params
        )

    def said(self, body: Any, text: str) -> str:
        return google_said(body, text)

    def _jobs_url(self, project: str) -> str:
        return f"{self._aiplatform}/v1/projects/{project}/locations/{self._location}/batchPredictionJobs"

    async def upload(self, data: bytes, name: str) -> str:
        obj = f"{self._prefix}/{name}"
        url = f"{self._gcs}/upload/storage/v1/b/{self._bucket}/o"
        params = {"uploadType": "media", "name": obj}
        await self._send("POST", url, content=data, params=params)
        return f"gs://{self._bucket}/{obj}"

    async def create(self, file_id: str | None, data: bytes, metadata: dict[str, str]) -> str:
        if file_id is None:
            raise PermanentError("a Vertex AI batch job reads an uploaded file; none was uploaded")
        _, project = await self._token()
        tag = "-".join(metadata.values()) or f"titjudge-{int(time.time())}"
        job = {
            "displayName": tag,
            "model": f"publishers/google/models/{self._model}",
            "inputConfig": {"instancesFormat": "jsonl", "gcsSource": {"uris": [file_id]}},
            "outputConfig": {
                "predictionsFormat": "jsonl",
                "gcsDestination": {"outputUriPrefix": f"gs://{self._bucket}/{self._prefix}/{tag}"},
            },
            "labels": dict(metadata),
        }
        made = (await self._send("POST", self._jobs_url(project), json_body=job)).json()
        return str(made["name"])

    async def find(self, metadata: dict[str, str], since: float, lines: int) -> str | None:
        """A job labelled with every pair of `metadata` (up to 10 pages of the list)."""
        _, project = await self._token()
        where = " AND ".join(f'labels.{k}="{v}"' for k, v in metadata.items())
        params = {"filter": where, "pageSize": "100"}
        for _ in range(10):
            page = (await self._send("GET", self._jobs_url(project), params=params)).json()
            for job in page.get("batchPredictionJobs") or []:
                labels = job.get("labels") or {}
                if all(labels.get(k) == v for k, v in metadata.items()):
                    return str(job["name"])
            if not page.get("nextPageToken"):
                return None
            params["pageToken"] = str(page["nextPageToken"])
        return None

    async def retrieve(self, job_id: str) -> JobState:
        job = (await self._send("GET", f"{self._aiplatform}/v1/{job_id}")).json()
        stats = job.get("completionStats") or {}
        error = job.get("error") or {}
        done, failed = int(stats.get("successfulCount") or 0), int(stats.get("failedCount") or 0)
        left = max(int(stats.get("incompleteCount") or 0), 0)
        message = error.get("message") if isinstance(error, dict) else None
        return JobState(
            status=STATES.get(str(job.get("state")), "failed"),
            output_file_id=(job.get("outputInfo") or {}).get("gcsOutputDirectory"),
            total=done + failed + left,
            completed=done,
            failed=failed,
            errors=redact(f"{job.get('state')}: {message}") if message else None,
        )

    async def results(self, state: JobState) -> list[dict[str, Any]]:
        """Every row of every `.jsonl` file under the job's output directory."""
        if not state.output_file_id:
            return []
        bucket, _, folder = state.output_file_id.removeprefix("gs://").partition("/")
        listing = f"{self._gcs}/storage/v1/b/{bucket}/o"
        params = {"prefix": folder.rstrip("/") + "/"}
        rows: list[dict[str, Any]] = []
        while True:
            page = (await self._send("GET", listing, params=params)).json()
            for item in page.get("items") or []:
                name = str(item.get("name") or "")
                if not name.endswith(".jsonl"):
                    continue
                url = f"{listing}/{quote(name, safe='')}"
                data = await self._send("GET", url, params={"alt": "media"})
                rows.extend(_rows(data.content))
            if not page.get("nextPageToken"):
                return rows
            params["pageToken"] = str(page["nextPageToken"])

    # ---------------------------------------------------------------- one row

    def parse(self, row: dict[str, Any]) -> LineResult:
        custom_id = str(row.get("custom_id"))
        status = row.get("status")
        if status:
            text = status if isinstance(status, str) else json.dumps(status)
            return LineResult(custom_id, error=redact(f"batch line failed: {text}"))
        response = row.get("response")
        if not isinstance(response, dict):
            return LineResult(custom_id, error="batch line failed: a row with no response")
        try:
            return LineResult(custom_id, generation=self._generation(response))
        except PermanentError as exc:
            return LineResult(custom_id, error=str(exc))
        except Exception as exc:  # litellm could not read the reply: the line's failure
            return LineResult(custom_id, error=redact(f"batch line unreadable: {exc}"))

    def _generation(self, body: dict[str, Any]) -> Generation:
        import httpx

        litellm = litellm_module()
        from litellm.litellm_core_utils.litellm_logging import Logging
        from litellm.llms.vertex_ai.gemini.vertex_and_google_ai_studio_gemini import (
            VertexGeminiConfig,
        )

        logging = Logging(
            model=self._model,
            messages=[],
            stream=False,
            call_type="acompletion",
            start_time=datetime.now(),
            litellm_call_id="",
            function_id="",
        )
        logging.optional_params = {}
        raw = httpx.Response(200, json=body, request=httpx.Request("POST", self._aiplatform))
        response = VertexGeminiConfig().transform_google_generate_content_to_openai_model_response(
            completion_response=body,
            model_response=litellm.ModelResponse(),
            model=self._model,
            logging_obj=logging,
            raw_response=raw,
        )
        generation = generation_from(response)
        generation.cost = batch_cost(
            getattr(response, "usage", None),
            self._model,
            "vertex_ai",
            vertex_location=self._location,
        )
        return generation


def _rows(data: bytes) -> list[dict[str, Any]]:
    """A predictions file's rows, each with its line's `custom_id` from the request's labels."""
    rows = []
    for text in jsonl_lines(data.decode("utf-8")):
        if not text.strip():
            continue
        row = json.loads(text)
        labels = (row.get("request") or {}).get("labels") or {}
        row["custom_id"] = labels.get(LABEL)
        rows.append(row)
    return rows


__all__ = ["BUCKET_PARAM", "VERTEX_MAX_BYTES", "VERTEX_MAX_REQUESTS", "VertexBatchAPI"]
