"""The Gemini Developer API's Batch API for a `litellm:gemini/...` model, driven with httpx.

litellm (1.110) uploads a Gemini batch file as it is given and translates no line, so titjudge
writes Gemini's own lines and calls the REST endpoints itself. Shapes, from the Batch API guide
(https://ai.google.dev/gemini-api/docs/batch-api), its reference
(https://ai.google.dev/api/batch-api) and the Files guide
(https://ai.google.dev/gemini-api/docs/files):

- input file: JSONL, one `{"key", "request": GenerateContentRequest}` per line, at most 2 GB,
  uploaded with the File API's resumable protocol: `POST {host}/upload/v1beta/files` with
  `X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command: start` answers with the upload
  URL in `x-goog-upload-url`; the bytes go there with `X-Goog-Upload-Command: upload,
  finalize` and `X-Goog-Upload-Offset: 0`, answered `{"file": {"name": "files/..."}}`;
- `POST {host}/v1beta/models/{model}:batchGenerateContent` `{"batch": {"display_name",
  "input_config": {"file_name"}}}` creates a job and answers an Operation named
  `batches/{id}`. Creation is not idempotent (the guide's "Best practices"): a run killed while
  creating finds its job again by `display_name` among `GET {host}/v1beta/batches`
  (`{"operations", "nextPageToken"}`);
- `GET {host}/v1beta/batches/{id}`: the Operation, `metadata.state` BATCH_STATE_PENDING,
  RUNNING, SUCCEEDED, FAILED, CANCELLED or EXPIRED (the SDKs say JOB_STATE_*; both are read),
  `metadata.batchStats` {requestCount, successfulRequestCount, failedRequestCount,
  pendingRequestCount}, and once done `response.responsesFile` (also `metadata.output`) or
  `error`. An expired job (pending or running over 48 h) "will not have any results": its
  lines are sent again;
- `GET {host}/download/v1beta/{responsesFile}:download?alt=media`: the results, one line per
  request with its `key` and either `response` (a GenerateContentResponse) or a status object
  (google.rpc.Status `{code, message}`, read under `status` or `error`).

The key goes in the `x-goog-api-key` header, never in a URL (so never in a log): the one the
online call uses (`api_key_env`'s, else GOOGLE_API_KEY, GEMINI_API_KEY, PALM_API_KEY, as
litellm reads them). `api_base` is taken as litellm's online call takes it (`.../v1beta`, to
which it appends `/models/{model}:generateContent`) or as a bare host.

Each line's request is litellm's own generateContent body for the online call
(`models.litellm.raw`), and each response is read by litellm's own Gemini response
transformation, the one the online call goes through, so a batch reply is the Generation the
online call would give (thought parts apart, finish reasons, thoughts and cached tokens). Cost:
litellm's batch rates for the model (`_batches`, else half the list price), unknown where it
does not price the model.

Limits per job: 2 GB of input file (the guide); the number of requests is not documented, so
titjudge puts at most 50,000 in one job (as Inspect AI does for Gemini).
"""

from __future__ import annotations

import copy
import json
import os
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import httpx

from titjudge.files import jsonl_lines
from titjudge.models.core.base import Generation, PermanentError
from titjudge.models.core.batch import JobState, LineResult
from titjudge.models.litellm.batch.http import BatchHTTP, google_said
from titjudge.models.litellm.batch.price import batch_cost
from titjudge.models.litellm.batch.site import BatchSite
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.reply import generation_from
from titjudge.safety import redact, register_secret

DEFAULT_HOST = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
GEMINI_MAX_REQUESTS = 50_000
GEMINI_MAX_BYTES = 2 * 1024**3
#: the REST states (BATCH_STATE_*) and the SDKs' names for them (JOB_STATE_*)
_STATES = {
    "SUCCEEDED": "completed",
    "FAILED": "failed",
    "CANCELLED": "cancelled",
    "EXPIRED": "expired",
    "RUNNING": "in_progress",
    "PENDING": "pending",
}
#: google.rpc.Code names, for a line's status that gives only the number
_CODES = {
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    16: "UNAUTHENTICATED",
}
#: a line cancelled before it ran (its job cancelled, or the service dropped it): sent again
_UNFINISHED = frozenset({"CANCELLED"})
#: pages of `GET batches` read when looking for a job a killed run created
_MAX_PAGES = 20


class GeminiBatchAPI(BatchHTTP):
    """The File and Batch endpoints of the Gemini Developer API, for one model."""

    api_name = "Gemini batch API"

    max_requests = GEMINI_MAX_REQUESTS
    max_bytes = GEMINI_MAX_BYTES

    def __init__(self, site: BatchSite):
        super().__init__(site)
        self._host = gemini_host(site.api_base)

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"key": custom_id, "request": body}

    # ------------------------------------------------------------------ the endpoints

    def _rest(self, path: str) -> str:
        return f"{self._host}/{API_VERSION}/{path}"

    def _auth(self) -> dict[str, str]:
        key = self._api_key or _key_from_env()
        if not key:
            raise PermanentError(
                "no Gemini API key: set GEMINI_API_KEY or GOOGLE_API_KEY (or api_key_env)"
            )
        register_secret(key)
        return {"x-goog-api-key": key}

    async def _send(
        self, method: str, url: str, *, transfer: bool = False, **kwargs: Any
    ) -> httpx.Response:
        """One request (`BatchHTTP.exchange`); a file's transfer may take 10 minutes."""
        seconds = max(self._timeout, 600.0) if transfer else self._timeout
        return await self.exchange(method, url, timeout=seconds, **kwargs)

    def said(self, body: Any, text: str) -> str:
        return google_said(body, text)

    async def upload(self, data: bytes, name: str) -> str:
        auth = self._auth()
        start = await self._send(
            "POST",
            f"{self._host}/upload/{API_VERSION}/files",
            headers={
                **auth,
                "X-Goog-Upload-Protocol": "resumable",
                "X-Goog-Upload-Command": "start",
                "X-Goog-Upload-Header-Content-Length": str(len(data)),
                "X-Goog-Upload-Header-Content-Type": "jsonl",
            },
            json={"file": {"display_name": name}},
        )
        url = start.headers.get("x-goog-upload-url")
        if not url:
            raise PermanentError("Gemini File API: the upload start gave no x-goog-upload-url")
        # the key goes only to the API's own host
        same = urlsplit(url)[:2] == urlsplit(self._host)[:2]
        done = await self._send(
            "POST",
            url,
            transfer=True,
            headers={
                **(auth if same else {}),
                "X-Goog-Upload-Command": "upload, finalize",
                "X-Goog-Upload-Offset": "0",
            },
            content=data,
        )
        made = _json(done).get("file") or {}
        if not made.get("name"):
            raise PermanentError("Gemini File API: the upload gave no file name")
        return str(made["name"])

    async def create(self, file_id: str | None, data: bytes, metadata: dict[str, str]) -> str:
        if file_id is None:
            raise PermanentError("a Gemini batch job reads an uploaded file; none was uploaded")
        job = {"display_name": metadata["titjudge_job"], "input_config": {"file_name": file_id}}
        made = await self._send(
            "POST",
            self._rest(f"models/{self._model}:batchGenerateContent"),
            headers=self._auth(),
            json={"batch": job},
        )
        operation = _json(made)
        name = operation.get("name") or (operation.get("metadata") or {}).get("name")
        if not name:
            raise PermanentError("Gemini Batch API: the job was created without a name")
        return str(name)

    async def find(self, metadata: dict[str, str], since: float, lines: int) -> str | None:
        """The job whose `display_name` is this job's tag (`titjudge_job`), if listed."""
        wanted = metadata["titjudge_job"]
        token: str | None = None
        for _ in range(_MAX_PAGES):
            params = {"pageToken": token} if token else None
            listed = _json(
                await self._send("GET", self._rest("batches"), headers=self._auth(), params=params)
            )
            for operation in listed.get("operations") or []:
                found = operation.get("metadata") or {}
                if found.get("displayName", found.get("display_name")) == wanted:
                    return str(operation.get("name") or found.get("name"))
            token = listed.get("nextPageToken")
            if not token:
                break
        return None

    async def retrieve(self, job_id: str) -> JobState:
        operation = _json(await self._send("GET", self._rest(job_id), headers=self._auth()))
        found = operation.get("metadata") or {}
        state = str(found.get("state") or "")
        status = _STATES.get(state.removeprefix("BATCH_STATE_").removeprefix("JOB_STATE_"))
        status = status or (state.lower() or "pending")
        if operation.get("done") and status not in ("completed", "failed", "cancelled", "expired"):
            status = "failed" if operation.get("error") else "completed"
        output = operation.get("response") or found.get("output") or {}
        stats = found.get("batchStats") or {}
        error = operation.get("error")
        errors = f"{_status_name(error)}: {error.get('message')}" if isinstance(error, dict) else ""
        return JobState(
            status=status,
            output_file_id=output.get("responsesFile"),
            total=_count(stats.get("requestCount")),
            completed=_count(stats.get("successfulRequestCount")),
            failed=_count(stats.get("failedRequestCount")),
            errors=redact(errors) or None,
        )

    async def results(self, state: JobState) -> list[dict[str, Any]]:
        if not state.output_file_id:  # an expired or failed job: no results
            return []
        url = f"{self._host}/download/{API_VERSION}/{state.output_file_id}:download"
        got = await self._send(
            "GET", url, transfer=True, headers=self._auth(), params={"alt": "media"}
        )
        rows: list[dict[str, Any]] = []
        for text in jsonl_lines(got.content.decode("utf-8")):
            if text.strip():
                row = json.loads(text)
                row["custom_id"] = str(row.get("key"))
                rows.append(row)
        return rows

    # ------------------------------------------------------------------ reading a row

    def parse(self, row: dict[str, Any]) -> LineResult:
        custom_id = str(row.get("custom_id") or row.get("key"))
        failure = row.get("status") or row.get("error")
        response = row.get("response")
        if failure or not isinstance(response, dict):
            if isinstance(failure, dict):
                name = _status_name(failure)
                said = f"{name}: {failure.get('message')}"
            else:
                name, said = "", str(failure or "no response and no status in the row")
            reason = redact(f"batch line failed: {said}")
            return LineResult(custom_id, error=reason, unfinished=name in _UNFINISHED)
        try:
            return LineResult(custom_id, generation=self._generation(response))
        except PermanentError as exc:
            return LineResult(custom_id, error=str(exc))
        except Exception as exc:  # litellm could not read the response
            reason = f"batch line failed: unreadable response: {type(exc).__name__}: {exc}"
            return LineResult(custom_id, error=redact(reason))

    def _generation(self, response: dict[str, Any]) -> Generation:
        """The reply as the online call reads it: litellm's Gemini transformation, then
        `generation_from`, priced at the batch rates."""
        litellm = litellm_module()
        from litellm.llms.vertex_ai.gemini.vertex_and_google_ai_studio_gemini import (
            VertexGeminiConfig,
        )

        # what the transformation reads of litellm's logging object (no tool calls are sent)
        logging = SimpleNamespace(optional_params={}, litellm_params={})
        model_response = (
            VertexGeminiConfig().transform_google_generate_content_to_openai_model_response(
                completion_response=copy.deepcopy(response),
                model_response=litellm.ModelResponse(),
                model=self._model,
                logging_obj=logging,  # type: ignore[arg-type]
                raw_response=httpx.Response(200, json=response),
            )
        )
        generation = generation_from(model_response)
        generation.cost = batch_cost(getattr(model_response, "usage", None), self._model, "gemini")
        return generation


def gemini_host(api_base: str | None) -> str:
    """The API's host from `api_base` as litellm's online call takes it (`.../v1beta`, or a
    bare host; else GEMINI_API_BASE, else Google's)."""
    base = (api_base or os.environ.get("GEMINI_API_BASE") or DEFAULT_HOST).rstrip("/")
    for version in ("/v1beta", "/v1alpha", "/v1"):
        if base.endswith(version):
            return base[: -len(version)]
    return base


def _key_from_env() -> str | None:
    """The key litellm's online Gemini call reads when none is passed (litellm/main.py)."""
    litellm = litellm_module()

    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "PALM_API_KEY"):
        if os.environ.get(name):
            return os.environ[name]
    return litellm.api_key


def _json(reply: httpx.Response) -> dict[str, Any]:
    try:
        found = reply.json()
    except ValueError:
        raise PermanentError(
            f"Gemini batch API: HTTP {reply.status_code} with a body that is not JSON"
        ) from None
    return found if isinstance(found, dict) else {}


def _status_name(status: dict[str, Any]) -> str:
    code = status.get("code")
    named = status.get("status") or (_CODES.get(code) if isinstance(code, int) else None)
    return str(named or code or "error")


def _count(value: Any) -> int:
    """A batchStats count (int64, which proto3 JSON writes as a string)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


__all__ = ["GEMINI_MAX_BYTES", "GEMINI_MAX_REQUESTS", "GeminiBatchAPI", "gemini_host"]
