"""OpenAI's (and Azure OpenAI's) Batch API for a `litellm:openai/...` or `azure/...` model,
through litellm's files and batches functions.

Shapes, from OpenAI's Batch guide (https://developers.openai.com/api/docs/guides/batch): an
input file is JSONL, one `{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}` per line, uploaded with `purpose="batch"`; a job is created from the file with
`completion_window="24h"` and up to 16 metadata pairs; its `status` ends at completed,
failed, expired or cancelled. The output file holds one line per request that ran,
`{"custom_id", "response": {"status_code", "body"}, "error"}`, in no set order; requests
that failed, and those an expired job never ran (`error.code == "batch_expired"`), are in the
error file. Limits: 50,000 requests and 200 MB per input file. Azure's global batch takes the
same lines with `url: "/chat/completions"` and the deployment as `model`
(https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/batch).

Each line's body is litellm's own body for the online call (`models.litellm.raw`); a reply's
cost is litellm's batch price for the model (`batch_cost_calculator`: its `_batches` rates,
else half the list price), or unknown where litellm does not price the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from titjudge.files import jsonl_lines
from titjudge.models.core.base import GenerateRequest, Generation, PermanentError
from titjudge.models.core.batch import BatchAPI, JobState, LineResult
from titjudge.models.litellm.batch.anthropic import AnthropicBatchAPI
from titjudge.models.litellm.batch.gemini import GeminiBatchAPI
from titjudge.models.litellm.batch.price import batch_cost
from titjudge.models.litellm.batch.site import BatchSite, SiteAdapter
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.reply import generation_from
from titjudge.safety import redact

#: OpenAI's documented limits per batch (the Batch guide, "Rate limits")
OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
#: Azure's global batch limits (MicrosoftDocs global-batch-limits: 100,000 requests, 200 MB)
AZURE_MAX_REQUESTS = 100_000
#: why a request in the error file was never run: it is sent again
UNFINISHED = frozenset({"batch_expired", "batch_cancelled"})


class OpenAIBatchAPI(SiteAdapter):
    """The files and batches endpoints of the provider that serves the site's model."""

    def __init__(self, site: BatchSite):
        super().__init__(site)
        self.max_bytes = OPENAI_MAX_BYTES
        self.max_requests = AZURE_MAX_REQUESTS if site.provider == "azure" else OPENAI_MAX_REQUESTS
        # the online call passes `params` to litellm, api_version with them: so must each
        # batch step (Azure's `api-version`; None: litellm's own choice, AZURE_API_VERSION
        # else its default)
        version = site.params.get("api_version") if site.provider == "azure" else None
        self._api_version = str(version or "") or None

    def body(self, request: GenerateRequest) -> dict[str, Any]:
        body = super().body(request)
        # the OpenAI SDK merges extra_body into the JSON it posts
        body.update(body.pop("extra_body", None) or {})
        return body

    def _endpoint(self) -> str:
        """Azure's classic batch API names the endpoint without /v1 (its docs' samples)."""
        return "/chat/completions" if self._provider == "azure" else "/v1/chat/completions"

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": self._endpoint(), "body": body}

    def _where(self) -> dict[str, Any]:
        # max_retries 0: the OpenAI SDK would repeat a POST whose reply was lost (a second
        # job, billed); titjudge retries each step itself, creation only after `find`
        where: dict[str, Any] = {
            "custom_llm_provider": self._provider,
            "timeout": self._timeout,
            "max_retries": 0,
        }
        if self._api_base:
            where["api_base"] = self._api_base
        if self._api_key:
            where["api_key"] = self._api_key
        if self._api_version:
            where["api_version"] = self._api_version
        return where

    async def upload(self, data: bytes, name: str) -> str:
        litellm = litellm_module()

        made = await litellm.acreate_file(file=(name, data), purpose="batch", **self._where())
        return str(made.id)

    async def create(self, file_id: str | None, data: bytes, metadata: dict[str, str]) -> str:
        litellm = litellm_module()

        if file_id is None:
            raise PermanentError("an OpenAI batch job reads an uploaded file; none was uploaded")
        made = await litellm.acreate_batch(
            completion_window="24h",
            endpoint=self._endpoint(),  # type: ignore[arg-type]
            input_file_id=file_id,
            metadata=metadata,
            **self._where(),
        )
        return str(made.id)

    async def find(self, metadata: dict[str, str], since: float, lines: int) -> str | None:
        """A job whose metadata holds every pair of `metadata` (the newest 100 are read)."""
        litellm = litellm_module()

        listed = await litellm.alist_batches(limit=100, **self._where())
        for job in _items(listed):
            found = _get(job, "metadata") or {}
            if all(found.get(k) == v for k, v in metadata.items()):
                return str(_get(job, "id"))
        return None

    async def retrieve(self, job_id: str) -> JobState:
        litellm = litellm_module()

        job = await litellm.aretrieve_batch(batch_id=job_id, **self._where())
        counts = _get(job, "request_counts")
        errors = _get(job, "errors")
        listed = _get(errors, "data") if errors is not None else None
        text = "; ".join(
            f"{_get(e, 'code')}: {_get(e, 'message')}"
            + (f" (line {_get(e, 'line')})" if _get(e, "line") is not None else "")
            for e in (listed or [])
        )
        return JobState(
            status=str(_get(job, "status")),
            output_file_id=_get(job, "output_file_id"),
            error_file_id=_get(job, "error_file_id"),
            total=int(_get(counts, "total") or 0) if counts is not None else 0,
            completed=int(_get(counts, "completed") or 0) if counts is not None else 0,
            failed=int(_get(counts, "failed") or 0) if counts is not None else 0,
            errors=redact(text) or None,
        )

    async def results(self, state: JobState) -> list[dict[str, Any]]:
        litellm = litellm_module()

        rows: list[dict[str, Any]] = []
        for file_id in (state.output_file_id, state.error_file_id):
            if not file_id:
                continue
            content = await litellm.afile_content(file_id=file_id, **self._where())
            for text in jsonl_lines(_content_bytes(content).decode("utf-8")):
                if text.strip():
                    rows.append(json.loads(text))
        return rows

    def parse(self, row: dict[str, Any]) -> LineResult:
        return self._line_result(row)

    def _line_result(self, row: dict[str, Any]) -> LineResult:
        custom_id = str(row.get("custom_id"))
        error = row.get("error")
        response = row.get("response") or {}
        if error:
            code = str(error.get("code") or "")
            reason = f"batch line failed: {code}: {error.get('message')}"
            return LineResult(custom_id, error=redact(reason), unfinished=code in UNFINISHED)
        status = int(response.get("status_code") or 0)
        body = response.get("body") or {}
        if status != 200:
            found = body.get("error") if isinstance(body, dict) else None
            message = found.get("message") if isinstance(found, dict) else json.dumps(body)
            kind = found.get("type") or found.get("code") if isinstance(found, dict) else None
            reason = f"batch line failed: HTTP {status}" + (f" {kind}" if kind else "")
            return LineResult(custom_id, error=redact(f"{reason}: {message}"))
        try:
            return LineResult(custom_id, generation=self._generation(body))
        except PermanentError as exc:
            return LineResult(custom_id, error=str(exc))

    def _generation(self, body: dict[str, Any]) -> Generation:
        litellm = litellm_module()
        from litellm.utils import convert_to_model_response_object

        response = convert_to_model_response_object(
            response_object=body, model_response_object=litellm.ModelResponse()
        )
        generation = generation_from(response)
        generation.cost = batch_cost(getattr(response, "usage", None), self._model, self._provider)
        return generation


def batch_provider(model_id: str, params: dict[str, Any] | None = None) -> str:
    """The litellm provider a model id names (its prefix, or `custom_llm_provider`)."""
    custom = (params or {}).get("custom_llm_provider")
    return str(custom) if custom else model_id.partition("/")[0]


def _vertex(site: BatchSite) -> BatchAPI:
    from titjudge.models.litellm.batch.vertex import VertexBatchAPI  # google auth: when used

    return VertexBatchAPI(site)


#: the batch adapter of each provider titjudge drives (`BATCH_PROVIDERS`), picked from a table
#: as the models are (`models.registry`)
BATCH_ADAPTERS: dict[str, Callable[[BatchSite], BatchAPI]] = {
    "openai": OpenAIBatchAPI,
    "azure": OpenAIBatchAPI,
    "anthropic": AnthropicBatchAPI,
    "gemini": GeminiBatchAPI,
    "vertex_ai": _vertex,
}


def batch_site(
    backend: Any, model_id: str, params: dict[str, Any], api_key: str | None, settings: Any
) -> BatchSite | None:
    """Where `backend`'s batch jobs go (`settings`: its api_base and timeout), or None where
    its provider has no batch API titjudge drives or it has several endpoints."""
    provider = batch_provider(model_id, params)
    if provider not in BATCH_ADAPTERS or isinstance(settings.api_base, list):
        return None
    return BatchSite(
        backend=backend,
        provider=provider,
        model=model_id.split("/", 1)[1] if "/" in model_id else model_id,
        api_base=settings.api_base,
        api_key=api_key,
        timeout=settings.timeout,
        params=params,
    )


def batch_api_for(
    backend: Any, model_id: str, params: dict[str, Any], api_key: str | None
) -> BatchAPI | None:
    """The batch API of `backend`'s provider (one endpoint), or None where titjudge drives none."""
    site = batch_site(backend, model_id, params, api_key, backend)
    return None if site is None else BATCH_ADAPTERS[site.provider](site)


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _items(listed: Any) -> list[Any]:
    data = _get(listed, "data")
    return list(data or [])


def _content_bytes(content: Any) -> bytes:
    if isinstance(content, bytes | bytearray):
        return bytes(content)
    for name in ("content", "read"):
        found = getattr(content, name, None)
        if isinstance(found, bytes | bytearray):
            return bytes(found)
        if callable(found):
            data = found()
            if isinstance(data, bytes | bytearray):
                return bytes(data)
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text.encode("utf-8")
    raise PermanentError(f"unreadable batch file content ({type(content).__name__})")


__all__ = [
    "OPENAI_MAX_BYTES",
    "OPENAI_MAX_REQUESTS",
    "OpenAIBatchAPI",
    "batch_api_for",
    "batch_provider",
]
