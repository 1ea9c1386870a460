"""Anthropic's Message Batches API for a `litellm:anthropic/...` model, over HTTP (httpx).

litellm (1.110) retrieves Anthropic batches but cannot create one (its
`AnthropicBatchesConfig.transform_create_batch_request` raises NotImplementedError), so the
endpoints are called here directly, at `api_base` (else `ANTHROPIC_API_BASE` /
`ANTHROPIC_BASE_URL`, else https://api.anthropic.com, as litellm's online call resolves it),
with the model's key (`api_key_env`, else `ANTHROPIC_API_KEY`) in the `x-api-key` header only.

Shapes, from Anthropic's batch guide
(https://platform.claude.com/docs/en/build-with-claude/batch-processing) and API reference
(create https://platform.claude.com/docs/en/api/typescript/beta/messages/batches/create.md,
retrieve https://platform.claude.com/docs/zh-CN/api/retrieving-message-batches, list
https://docs.anthropic.com/en/api/listing-message-batches, results
https://docs.claude.com/de/api/retrieving-message-batch-results):

- `POST /v1/messages/batches` `{"requests": [{"custom_id", "params"}]}`: the requests go inline
  (no file is uploaded), each `params` a Messages API body; `custom_id` matches
  `^[a-zA-Z0-9_-]{1,64}$`; at most 100,000 requests or 256 MB. A beta feature a line uses
  (litellm's `anthropic-beta` header for it online, e.g. structured outputs) is named in the
  same header of the creation.
- the Message Batch: `id`, `processing_status` (in_progress, canceling, ended),
  `request_counts` {processing, succeeded, errored, canceled, expired}, `created_at` (RFC
  3339), `cancel_initiated_at`, `results_url` (null until it ended).
- `GET /v1/messages/batches?limit=&after_id=`: `{"data", "has_more", "first_id", "last_id"}`,
  the newest first.
- results, JSONL in no set order: `{"custom_id", "result": {"type": "succeeded", "message"} |
  {"type": "errored", "error": {"type": "error", "error": {"type", "message"}}} | {"type":
  "canceled"} | {"type": "expired"}}`; an HTTP error is `{"type": "error", "error": {"type",
  "message"}}` (https://docs.claude.com/en/api/errors).

Each line's `params` is litellm's own body for the online call (`models.litellm.raw`), so the
two cannot differ; a `succeeded` message is read by litellm's own Anthropic response
transformation, as the online reply is. Its cost is litellm's batch price for the model
(`batch_cost_calculator`: its `_batches` rates, else half the list price), or unknown where
litellm does not price it.

`find` is a heuristic: Anthropic keeps no metadata on a batch, so a batch a killed run may
have created is recognised only by its size and time: one listed with as many requests as the
job, created at most `CLOCK_SKEW` seconds before the creation was asked. Another client
creating a batch of that size in the same workspace at that moment could be taken for it;
then its results hold none of the job's custom_ids (they are hashes of the bodies), so no
answer is misattributed: the job's lines count as never run and are sent again.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from titjudge.files import jsonl_lines
from titjudge.models.core.base import (
    GenerateRequest,
    Generation,
    PermanentError,
)
from titjudge.models.core.batch import JobState, LineResult
from titjudge.models.litellm.batch import anthropic_wire as wire
from titjudge.models.litellm.batch.http import BatchHTTP
from titjudge.models.litellm.batch.price import batch_cost
from titjudge.models.litellm.batch.site import BatchSite
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.raw import built, raw_request
from titjudge.models.litellm.reply import generation_from
from titjudge.safety import redact, register_secret

#: Anthropic's documented limits per batch ("Batch limitations")
ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_MAX_BYTES = 256 * 1024 * 1024
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE = "https://api.anthropic.com"
#: seconds a listed batch may say it was created before the creation was asked (clocks differ)
CLOCK_SKEW = 30.0
#: batches read per page of the list, and pages read at most, by `find`
LIST_LIMIT = 100
LIST_PAGES = 10
#: keys of litellm's body a batch line does not take: a line is never streamed
NOT_PARAMS = ("stream",)


#: the batches this process created or adopted (`find` never adopts one of them again)
TAKEN: set[str] = set()


class AnthropicBatchAPI(BatchHTTP):
    """The Message Batches endpoints for `backend`'s `anthropic/` model."""

    api_name = "Anthropic batch API"

    max_requests = ANTHROPIC_MAX_REQUESTS
    max_bytes = ANTHROPIC_MAX_BYTES
    uploads = False

    def __init__(self, site: BatchSite):
        super().__init__(site)
        base = (
            site.api_base
            or os.environ.get("ANTHROPIC_API_BASE")
            or os.environ.get("ANTHROPIC_BASE_URL")
            or DEFAULT_BASE
        )
        self._batches = f"{wire.root(base)}/v1/messages/batches"
        #: what the bodies built here need when sent, by their fingerprint: the betas litellm
        #: names in the online call's headers, the schema of its JSON tool (if any)
        self._betas: dict[str, tuple[str, ...]] = {}
        self._schemas: dict[str, dict[str, Any]] = {}
        self._lines: dict[str, str] = {}

    def body(self, request: GenerateRequest) -> dict[str, Any]:
        raw = built(raw_request(self._backend, request))
        body = dict(raw.get("raw_request_body") or {})
        # extra_body is merged into the JSON body (as the Anthropic SDK does); a batch line
        # has no other place for it
        body.update(body.pop("extra_body", None) or {})
        for key in NOT_PARAMS:
            body.pop(key, None)
        mark = wire.fingerprint(body)
        betas = wire.betas(raw.get("raw_request_headers"))
        if betas:
            self._betas[mark] = betas
        schema = wire.json_tool_schema(body)
        if schema is not None:
            self._schemas[mark] = schema
        return body

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        self._lines[custom_id] = wire.fingerprint(body)
        return {"custom_id": custom_id, "params": body}

    async def upload(self, data: bytes, name: str) -> str:
        raise PermanentError("Anthropic batches take their requests inline: nothing is uploaded")

    async def create(self, file_id: str | None, data: bytes, metadata: dict[str, str]) -> str:
        """A batch of the lines in `data` (Anthropic keeps no `metadata`: see `find`)."""
        lines = [text for text in data.splitlines() if text.strip()]  # bytes: \n and \r only
        betas: set[str] = set()
        for text in lines:
            params = json.loads(text).get("params") or {}
            betas.update(self._betas.get(wire.fingerprint(params), ()))
        payload = b'{"requests":[' + b",".join(lines) + b"]}"
        made = await self._call("POST", self._batches, content=payload, betas=sorted(betas))
        created = str(made.json()["id"])
        TAKEN.add(created)
        return created

    async def find(self, metadata: dict[str, str], since: float, lines: int) -> str | None:
        """The earliest listed batch of `lines` requests created at or after `since` (less
        `CLOCK_SKEW`), newest pages first; see the module's notes on why this is a guess."""
        floor = since - CLOCK_SKEW
        found: list[tuple[float, str]] = []
        after: str | None = None
        for _ in range(LIST_PAGES):
            params: dict[str, Any] = {"limit": LIST_LIMIT}
            if after:
                params["after_id"] = after
            page = (await self._call("GET", self._batches, params=params)).json()
            data = list(page.get("data") or [])
            stamps = [wire.timestamp(batch.get("created_at")) for batch in data]
            for batch, stamp in zip(data, stamps, strict=True):
                if stamp is not None and stamp >= floor and wire.size_of(batch) == lines:
                    found.append((stamp, str(batch.get("id"))))
            older = any(stamp is not None and stamp < floor for stamp in stamps)
            if older or not data or not page.get("has_more"):
                break
            after = page.get("last_id") or data[-1].get("id")
        # a batch this process made or adopted for another job is never adopted again (two
        # models' jobs of one size, both cut short while being created); chosen and taken
        # with no await between, so two jobs looking at once cannot take the same one
        free = sorted(entry for entry in found if entry[1] not in TAKEN)
        if not free:
            return None
        TAKEN.add(free[0][1])
        return free[0][1]

    async def retrieve(self, job_id: str) -> JobState:
        batch = (await self._call("GET", f"{self._batches}/{quote(job_id, safe='')}")).json()
        counts = batch.get("request_counts") or {}
        return JobState(
            status=wire.status(batch),
            output_file_id=batch.get("results_url"),
            total=wire.size_of(batch),
            completed=int(counts.get("succeeded") or 0),
            failed=int(counts.get("errored") or 0),
        )

    async def results(self, state: JobState) -> list[dict[str, Any]]:
        if not state.output_file_id:
            return []
        response = await self._call("GET", self._here(state.output_file_id))
        return [json.loads(text) for text in jsonl_lines(response.text) if text.strip()]

    def parse(self, row: dict[str, Any]) -> LineResult:
        custom_id = str(row.get("custom_id"))
        result = wire.object_of(row.get("result"))
        kind = result.get("type")
        if kind == "succeeded":
            try:
                generation = self._generation(dict(result.get("message") or {}), custom_id)
            except PermanentError as exc:
                return LineResult(custom_id, error=redact(str(exc)))
            except Exception as exc:  # a message litellm cannot read: the line's failure
                reason = f"batch line unreadable: {type(exc).__name__}: {exc}"
                return LineResult(custom_id, error=redact(reason))
            return LineResult(custom_id, generation=generation)
        if kind == "errored":
            outer = wire.object_of(result.get("error"))
            error = wire.object_of(outer.get("error")) or outer
            reason = (
                f"batch line failed: {error.get('type') or 'error'}: "
                f"{error.get('message') or 'no message'}"
            )
            return LineResult(custom_id, error=redact(reason))
        if kind in ("canceled", "expired"):
            reason = f"batch line {kind}: the batch ended before it ran"
            return LineResult(custom_id, error=reason, unfinished=True)
        return LineResult(custom_id, error=redact(f"batch line: unknown result type {kind!r}"))

    # ------------------------------------------------------------------ reading a reply

    def _generation(self, message: dict[str, Any], custom_id: str) -> Generation:
        """The message as the online call reads it: litellm's Anthropic transformation, in JSON
        mode with the request's tool schema when the reply is a call of litellm's JSON tool."""
        import httpx

        litellm = litellm_module()
        from litellm.llms.anthropic.chat.transformation import AnthropicConfig

        json_mode = any(
            block.get("type") == "tool_use" and block.get("name") == wire.JSON_TOOL
            for block in message.get("content") or []
            if isinstance(block, dict)
        )
        schema = self._schema_of(custom_id) if json_mode else None
        tools = [{"name": wire.JSON_TOOL, "input_schema": schema}] if schema is not None else None
        response = AnthropicConfig().transform_response(
            model=self._model,
            raw_response=httpx.Response(200, json=message),
            model_response=litellm.ModelResponse(),
            logging_obj=_Unlogged(),  # type: ignore[arg-type]
            request_data={},
            messages=[],
            optional_params={"tools": tools} if tools else {},
            litellm_params={},
            encoding=None,
            json_mode=json_mode,
        )
        generation = generation_from(response)
        generation.cost = batch_cost(getattr(response, "usage", None), self._model, "anthropic")
        return generation

    def _schema_of(self, custom_id: str) -> dict[str, Any] | None:
        """The JSON tool schema of the line's body: known by its custom_id where this run wrote
        the line; else the one schema this model's bodies carry (a resumed job's lines)."""
        mark = self._lines.get(custom_id)
        if mark is not None:
            return self._schemas.get(mark)
        distinct = {json.dumps(s, sort_keys=True): s for s in self._schemas.values()}
        return next(iter(distinct.values())) if len(distinct) == 1 else None

    # ------------------------------------------------------------------ HTTP

    def _headers(self, betas: list[str]) -> dict[str, str]:
        key = (self._api_key or os.environ.get("ANTHROPIC_API_KEY") or "").strip()
        if not key:
            raise PermanentError(
                "no Anthropic API key for its batch API: set ANTHROPIC_API_KEY (or the "
                "variable api_key_env names)",
                lasting="missing API key",
            )
        register_secret(key)
        headers = {
            "x-api-key": key,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
        }
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        return headers

    async def _call(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        params: dict[str, Any] | None = None,
        betas: list[str] | None = None,
    ) -> Any:
        """One request with the key and the betas (`BatchHTTP.exchange`)."""
        headers = self._headers(betas or [])
        return await self.exchange(method, url, content=content, params=params, headers=headers)

    def said(self, body: Any, text: str) -> str:
        """Anthropic's error body, `{"type": "error", "error": {"type", "message"}}`
        (https://docs.claude.com/en/api/errors)."""
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            return f"{error.get('type') or 'error'}: {error.get('message') or 'no message'}"
        return text[:300] or "no body"

    def _here(self, url: str) -> str:
        """`url` (a batch's results_url) on the configured endpoint: the key is never sent to
        a host other than the one it is configured for."""
        ours, theirs = urlsplit(self._batches), urlsplit(url)
        if (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc):
            return url
        return urlunsplit((ours.scheme, ours.netloc, theirs.path, theirs.query, ""))


class _Unlogged:
    """What litellm's response transformation logs to: nothing (the call is long done)."""

    def post_call(self, *args: Any, **kwargs: Any) -> None:
        return None


__all__ = ["ANTHROPIC_MAX_BYTES", "ANTHROPIC_MAX_REQUESTS", "CLOCK_SKEW", "AnthropicBatchAPI"]
