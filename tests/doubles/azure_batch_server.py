"""Azure OpenAI's files, batches and deployment chat endpoints on loopback.

Shapes from Azure's docs: "Getting started with Azure OpenAI batch deployments"
(https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/batch; its REST and Python
tabs, MicrosoftDocs/azure-ai-docs `articles/ai-services/openai/includes/batch/batch-rest.md` and
`batch-python.md`) and the data-plane authoring reference
(https://learn.microsoft.com/en-us/azure/ai-services/openai/authoring-reference-preview):

- every request goes to the resource endpoint under `/openai/...` with the `api-version`
  query parameter and the key in the `api-key` header (Microsoft Entra tokens go in
  `Authorization: Bearer`, not modelled here). A wrong key is a 401 `{"error": {"code": "401",
  "message": "Access denied due to invalid subscription key or wrong API endpoint..."}}`; a
  missing or unknown api-version a 404 `{"error": {"code": "404", "message": "Resource not
  found"}}` (as Azure answers it, https://learn.microsoft.com/en-us/answers/questions/2123635);
- `POST /openai/files` (multipart, `purpose=batch`), `GET /openai/files/{id}`,
  `GET /openai/files/{id}/content`; `POST /openai/batches` `{input_file_id, endpoint:
  "/chat/completions", completion_window: "24h", metadata}`, `GET /openai/batches/{id}`,
  `GET /openai/batches` (the Batch object as OpenAI's, with `metadata`);
- online chat: `POST /openai/deployments/{deployment}/chat/completions`;
- each line is `{"custom_id", "method": "POST", "url": "/chat/completions", "body": {"model":
  <the Global Batch deployment's name>, ...}}`: "The same Global Batch model deployment name
  must be present on each line of the batch file". A file that breaks this fails validation:
  the job goes `validating` -> `failed` with `errors: {"object": "list", "data": [{"code",
  "message", "line"}]}` and the documented codes `url_mismatch` (a line's url not the job's
  endpoint), `model_not_found` (no such deployment), `model_mismatch` (another deployment than
  the file's first line) and `invalid_request` (a deployment whose SKU is not Global Batch);
- output lines as the Python tab's sample: `{"custom_id", "response": {"body": <chat.completion
  with `content_filter_results` per choice and `prompt_filter_results`>, "request_id",
  "status_code": 200}, "error": null}`; a refused request is an error-file line whose body is
  Azure's error object, here its content filter's (`code: "content_filter"`, `innererror.code:
  "ResponsibleAIPolicyViolation"`, Azure OpenAI "Content filtering",
  https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/content-filter);
- Azure does not expire a job ("we don't expire the jobs that take longer"): a plan with an
  expiry is refused here. Embeddings are not taken ("Can I use the batch API for embeddings
  models? This is currently not supported."): a job whose endpoint is not chat completions
  fails validation with `url_mismatch`.

Each line is answered by the fake chat server `engine`, as `BatchServer` does; `stats` count
the online chat requests (to `/openai/deployments/...`) alone, and `seen` every request to
`/openai/...` as (method, path, api-version, whether the api-key matched).
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import ClientSession, web

from doubles.batch_server import BatchServer, Plan
from doubles.server_app import CHAT

#: API versions Azure documents for global batch: GA 2024-10-21, previews 2024-07-01-preview
#: (the Python tab), 2024-10-01-preview (the REST tab) and 2025-04-01-preview
API_VERSIONS = ("2024-10-21", "2024-07-01-preview", "2024-10-01-preview", "2025-04-01-preview")
AZURE_KEY = "azure-test-key-0123456789abcdef"
DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide "
    "a valid key for an active subscription and use a correct regional API endpoint for your "
    "resource."
)
FILTERED = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content management "
    "policy. Please modify your prompt and retry."
)
_SAFE = {"filtered": False, "severity": "safe"}
CHOICE_FILTERS = {k: _SAFE for k in ("hate", "self_harm", "sexual", "violence")}
PROMPT_FILTERS = [
    {
        "prompt_index": 0,
        "content_filter_results": {
            **CHOICE_FILTERS,
            "jailbreak": {"filtered": False, "detected": False},
        },
    }
]


class AzureBatchServer(BatchServer):
    thread_name = "fake-azure-batch"

    def __init__(
        self,
        *args: Any,
        deployments: dict[str, str] | None = None,
        azure_key: str = AZURE_KEY,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        #: deployment name -> SKU ("GlobalBatch" takes batch jobs, "GlobalStandard" online calls)
        self.deployments = dict(deployments or {})
        self.azure_key = azure_key
        self.seen: list[tuple[str, str, str | None, bool]] = []

    @property
    def endpoint(self) -> str:
        """The resource endpoint (`https://{resource}.openai.azure.com` on Azure): api_base."""
        return self.url.removesuffix("/v1")

    def plan(self, plan: Plan) -> None:
        if plan.expire_after is not None:
            raise ValueError("Azure does not expire batch jobs; a plan cannot expire one")
        super().plan(plan)

    # ------------------------------------------------------------------ routes

    def make_app(self) -> web.Application:
        app = super().make_app()
        app.middlewares.append(self._azure_gate)
        app.router.add_post("/openai/files", self._create_file)
        app.router.add_get("/openai/files/{id}/content", self._file_content)
        app.router.add_get("/openai/files/{id}", self._file)
        app.router.add_post("/openai/batches", self._create_azure_batch)
        app.router.add_get("/openai/batches", self._list_batches)
        app.router.add_get("/openai/batches/{id}", self._azure_batch)
        app.router.add_post(
            "/openai/deployments/{deployment}/chat/completions",
            self._counted(CHAT, self._deployment_chat),
        )
        return app

    @web.middleware
    async def _azure_gate(self, http: web.Request, handler: Any) -> web.StreamResponse:
        if not http.path.startswith("/openai/"):
            return await handler(http)  # type: ignore[no-any-return]
        version = http.query.get("api-version")
        keyed = http.headers.get("api-key") == self.azure_key
        self.seen.append((http.method, http.path, version, keyed))
        if not keyed:
            return _azure_error(401, "401", DENIED)
        if version not in API_VERSIONS:
            return _azure_error(404, "404", "Resource not found")
        return await handler(http)  # type: ignore[no-any-return]

    async def _deployment_chat(self, http: web.Request, ctx: Any) -> web.StreamResponse:
        deployment = http.match_info["deployment"]
        if deployment not in self.deployments:
            return _azure_error(
                404,
                "DeploymentNotFound",
                "The API deployment for this resource does not exist. If you created the "
                "deployment within the last 5 minutes, please wait a moment and try again.",
            )
        return await self._chat(http, ctx)

    async def _create_azure_batch(self, http: web.Request) -> web.Response:
        made = await self._create_batch(http)
        if made.status != 200:
            return made
        batch = self.batches[json.loads(made.text or "{}")["id"]]
        rows = [json.loads(t) for t in self.contents[batch["input_file_id"]].decode().splitlines()]
        batch["_invalid"] = self._validate(str(batch.get("endpoint")), rows)
        return made

    def _validate(self, endpoint: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The file's validation errors, with Azure's documented codes (see the module)."""
        errors: list[dict[str, Any]] = []
        first = rows[0]["body"].get("model") if rows else None
        for line, row in enumerate(rows, start=1):
            model = row.get("body", {}).get("model")
            if row.get("url") != endpoint or endpoint != "/chat/completions":
                code, message = (
                    "url_mismatch",
                    "The URL of this request does not match the job's endpoint.",
                )
            elif model not in self.deployments:
                code = "model_not_found"
                message = f"The model deployment '{model}' was not found."
            elif model != first:
                code = "model_mismatch"
                message = (
                    "The model deployment of this request does not match the rest of the file."
                )
            elif self.deployments[model] != "GlobalBatch":
                code = "invalid_request"
                message = f"The deployment '{model}' is not a Global Batch deployment."
            else:
                continue
            errors.append({"code": code, "message": message, "param": None, "line": line})
        return errors

    async def _azure_batch(self, http: web.Request) -> web.Response:
        batch = self.batches.get(http.match_info["id"])
        failing = batch is not None and batch.get("_invalid") and batch["status"] == "validating"
        if failing and self.poll_failures <= 0:
            assert batch is not None
            batch["status"], batch["failed_at"] = "failed", int(time.time())
            batch["errors"] = {"object": "list", "data": batch["_invalid"]}
        return await self._batch(http)

    # ------------------------------------------------------------------ lines

    async def _answer_line(
        self, session: ClientSession, row: dict[str, Any], text: str | None = None
    ) -> dict[str, Any]:
        answered = await super()._answer_line(session, row, text)
        body = answered["response"]["body"]
        for choice in body.get("choices", []):
            choice["content_filter_results"] = CHOICE_FILTERS
        body["prompt_filter_results"] = PROMPT_FILTERS
        answered.pop("id", None)  # Azure's sample line carries no `id`
        answered["response"]["request_id"] = f"req-{row['custom_id'][-12:]}"
        return answered

    def _failed_line(self, row: dict[str, Any], message: str) -> dict[str, Any]:
        return {
            "custom_id": row["custom_id"],
            "response": {
                "status_code": 400,
                "request_id": f"req-{row['custom_id'][-12:]}",
                "body": {
                    "error": {
                        "message": message,
                        "type": None,
                        "param": "prompt",
                        "code": "content_filter",
                        "status": 400,
                        "innererror": {
                            "code": "ResponsibleAIPolicyViolation",
                            "content_filter_result": {
                                **CHOICE_FILTERS,
                                "violence": {"filtered": True, "severity": "high"},
                            },
                        },
                    }
                },
            },
            "error": None,
        }


def _azure_error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


__all__ = ["API_VERSIONS", "AZURE_KEY", "FILTERED", "AzureBatchServer"]
