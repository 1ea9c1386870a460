"""The wire details of Anthropic's Message Batches API that `batch.anthropic` reads and writes:
the API's root from an `api_base`, a batch's size, status and creation time, a body's betas and
JSON tool. An HTTP error is classified by the adapters' shared exchange (`batch.http`)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any

#: the tool litellm turns `response_format` into for a model without native structured output
JSON_TOOL = "json_tool_call"


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


__all__ = [
    "JSON_TOOL",
    "betas",
    "fingerprint",
    "json_tool_schema",
    "object_of",
    "size_of",
    "root",
    "status",
    "timestamp",
]
