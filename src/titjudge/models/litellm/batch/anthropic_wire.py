"""The wire details of Anthropic's Message Batches API that `batch.anthropic` reads and writes:
the API's root from an `api_base`, a batch's size, status and creation time, a body's betas and
JSON tool, and an HTTP error as the call layer's transient or permanent error (Anthropic's
error body `{"type": "error", "error": {"type", "message"}}`, https://docs.claude.com/en/api/errors;
429, 5xx and 529 `overloaded_error` are worth another try)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any

from titjudge.models.core.base import PermanentError, TransientError
from titjudge.safety import redact

#: the tool litellm turns `response_format` into for a model without native structured output
JSON_TOOL = "json_tool_call"
#: HTTP statuses worth another try: a timeout, a rate limit, the provider's 5xx, 529 overloaded
TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def root(base: str) -> str:
    """The API's root from an `api_base` as litellm takes it (with or without /v1/messages)."""
    trimmed = base.rstrip("/")
    for suffix in ("/v1/messages", "/v1"):
        if trimmed.endswith(suffix):
            trimmed = trimmed[: -len(suffix)].rstrip("/")
    return trimmed


def object_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def fingerprint(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def betas(headers: Any) -> tuple[str, ...]:
    """The betas named in litellm's `anthropic-beta` header for the online call."""
    if not isinstance(headers, dict):
        return ()
    value = next((v for k, v in headers.items() if str(k).lower() == "anthropic-beta"), None)
    return tuple(b.strip() for b in str(value or "").split(",") if b.strip())


def json_tool_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") == JSON_TOOL:
            schema = tool.get("input_schema")
            return schema if isinstance(schema, dict) else None
    return None


def size_of(batch: dict[str, Any]) -> int:
    counts = batch.get("request_counts") or {}
    return sum(int(v or 0) for v in counts.values() if isinstance(v, int | float))


def status(batch: dict[str, Any]) -> str:
    """`processing_status` in the words of `JobState` (OpenAI's): an ended batch completed,
    or was cancelled, or expired (its unrun requests are `expired`)."""
    said = str(batch.get("processing_status"))
    if said == "canceling":
        return "cancelling"
    if said != "ended":
        return said
    if batch.get("cancel_initiated_at"):
        return "cancelled"
    if int((batch.get("request_counts") or {}).get("expired") or 0):
        return "expired"
    return "completed"


def timestamp(value: Any) -> float | None:
    """An RFC 3339 time (`2024-08-20T18:37:24.100435Z`) as a unix time; None if unreadable."""
    if not isinstance(value, str) or not value:
        return None
    # Python 3.10 reads neither a "Z" nor a fraction of other than 3 or 6 digits
    text = re.sub(r"[Zz]$", "+00:00", value.strip())
    text = re.sub(r"\.(\d+)", lambda m: "." + (m.group(1) + "000000")[:6], text, count=1)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def http_error(response: Any, what: str) -> Exception:
    code = int(response.status_code)
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        said = f"{error.get('type') or 'error'}: {error.get('message') or 'no message'}"
    else:
        said = response.text[:300] or "no body"
    reason = redact(f"Anthropic batch API, {what}: HTTP {code} {said}".replace("\n", " "))
    if code in TRANSIENT_STATUS:
        wait = response.headers.get("retry-after")
        try:
            retry_after = float(wait) if wait is not None else None
        except ValueError:
            retry_after = None
        return TransientError(reason, retry_after, rate_limited=code == 429)
    if code == 401:
        return PermanentError(reason, lasting="401 unauthorized (the API key was refused)")
    if code == 403:
        return PermanentError(reason, lasting="403 forbidden")
    return PermanentError(reason)


__all__ = [
    "JSON_TOOL",
    "TRANSIENT_STATUS",
    "betas",
    "fingerprint",
    "http_error",
    "json_tool_schema",
    "object_of",
    "size_of",
    "root",
    "status",
    "timestamp",
]
