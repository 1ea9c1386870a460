"""The one classification of a failed model call, whichever path sent it: given the error's
kind (`kinds.ErrorKind`: the error class both paths name, whether it is retried, what it
says of billing), `classify_kind` makes the same titjudge error of the same kind:
transient (retried), permanent (not), quota exhausted (the model stops), blocked (the
provider's content filter); with the wait a provider asks for (`retry_after_seconds`: the
Retry-After header, or Gemini's RetryInfo in the body) and whether the call was refused
before any token (then it cost $0). No litellm import here.
"""

from __future__ import annotations

import email.utils
import re
import time
from typing import Any

from titjudge.models.core.base import (
    PermanentError,
    QuotaExhaustedError,
    TransientError,
    mark_unbilled,
)
from titjudge.models.litellm.errors.kinds import ErrorKind
from titjudge.models.litellm.errors.lasting import body_text, lasting_reason
from titjudge.models.litellm.errors.reasons import content_filter, refused_before_tokens
from titjudge.safety import redact


def classify_kind(exc: BaseException, kind: ErrorKind, where: str | None = None) -> BaseException:
    """`exc`, of `kind`, as TransientError / PermanentError / QuotaExhaustedError /
    BlockedError (as is when its kind is neither retried nor permanent). A 429 is marked
    `rate_limited`, so the model's limiter pauses and (with no rate set) cuts its concurrency.
    A reason that will not heal within the run (`lasting_reason`) leads the message and marks
    the error `lasting` for the model's breaker (`models.calls.breaker`); `where` (the
    api_base) is named with a connection's reasons. An error the provider answered before
    generating anything (a 4xx/5xx status, a refused connection; not a timeout) is marked
    unbilled: that call cost $0."""
    mapped = _classify(exc, kind, where)
    never_sent = str(getattr(mapped, "lasting", None) or "").startswith(_NEVER_SENT)
    if mapped is not exc and (never_sent or refused_before_tokens(exc, kind)):
        mark_unbilled(mapped)
    return mapped


#: lasting reasons of a request that never reached the provider (`lasting_reason`): $0
_NEVER_SENT = ("missing client package", "TLS handshake failed", "DNS lookup failed")


def _classify(exc: BaseException, kind: ErrorKind, where: str | None) -> BaseException:
    message = error_message(exc)
    blocked = content_filter(exc, message, kind)
    if blocked is not None:
        return blocked
    quota = quota_exhausted(exc, kind)
    if quota is not None:
        return QuotaExhaustedError(f"quota exhausted: {quota}: {message}")
    status = getattr(exc, "status_code", None)
    limited = kind.name == "RateLimitError" or status == 429
    if kind.retried is False and _GEMINI_RATE_LIMIT.search(body_text(exc)):
        # litellm maps a Gemini error whose text contains "403" (as in "retry in 14.403s")
        # to a 403 before it looks at the 429: the body's own status decides
        return TransientError(
            f"RateLimitError: {message}", retry_after=retry_after_seconds(exc), rate_limited=True
        )
    refused = refused_shape(exc, body_text(exc))
    if refused is not None:  # every request of this shape fails alike: not retried
        return PermanentError(f"{refused}: {kind.name}: {message}", lasting=refused)
    lasting = lasting_reason(exc, where)
    if lasting is not None:
        if lasting.startswith(("connection refused", "DNS", "TLS")):  # retried: may be starting
            return TransientError(f"{lasting}: {kind.name}: {message}", lasting=lasting)
        return PermanentError(f"{lasting}: {kind.name}: {message}", lasting=lasting)
    if kind.retried is False:
        return PermanentError(
            f"{'context length exceeded' if kind.context_window else kind.name}: {message}"
        )
    if "Missing credentials" in message or "api_key client option must be set" in message:
        return PermanentError(f"missing API key: {message}")
    if kind.retried:
        return TransientError(
            f"{kind.name}: {message}", retry_after=retry_after_seconds(exc), rate_limited=limited
        )
    return exc


def error_message(exc: BaseException) -> str:
    """The provider's error text, secrets redacted, on one line."""
    text = str(getattr(exc, "message", None) or exc)
    return redact(text).replace("\n", " ")[:500]


#: a request-validation error in a 5xx body: pydantic's (llama-cpp-python's server raises
#: FastAPI's RequestValidationError inside its route and answers 500 with its text, e.g.
#: "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input
#: should be 'text' or 'json_object'\", ...}]"), or llama-server's older runtime_error for a
#: response_format it does not take (docs/research/server-dialects.md cites both)
_SHAPE_REFUSED = re.compile(
    r"'type':\s*'\w+_error',\s*'loc':\s*\('body'"
    r"|\d+ validation errors?:"
    r"|response_format type must be one of",
)


def refused_shape(exc: BaseException, body: str) -> str | None:
    """Why a server error is the server refusing the request's shape rather than failing: a
    5xx whose body is a request-validation error. Every request of the same shape fails the
    same way, so it is not retried, and it counts towards the model's breaker."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or status < 500 or not _SHAPE_REFUSED.search(body):
        return None
    advice = (
        ": set the model's structured_output to the dialect it takes (json_object for "
        "llama-cpp-python's server) or to auto, which learns it"
        if "response_format" in body
        else ""
    )
    return (
        f"the server refuses the request's shape (HTTP {status} with a request-validation "
        f"error{advice})"
    )


_RETRY_DELAY = re.compile(r"[\"']retryDelay[\"']\s*:\s*[\"'](\d+(?:\.\d+)?)s[\"']")
_GEMINI_RATE_LIMIT = re.compile(r"RESOURCE_EXHAUSTED|[\"']code[\"']\s*:\s*429\b")
_INSUFFICIENT_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota", re.IGNORECASE)
#: Gemini QuotaFailure violations that waiting within a run does not clear
_GEMINI_DEAD_QUOTA = re.compile(r"PerDay|limit:\s*0\b", re.IGNORECASE)


def quota_exhausted(exc: BaseException, kind: ErrorKind) -> str | None:
    """Why this 429 will not clear by waiting, or None for an ordinary rate limit.

    OpenAI: `insufficient_quota` ("You exceeded your current quota, please check your plan
    and billing details", OpenAI error-codes guide). Gemini: RESOURCE_EXHAUSTED whose
    QuotaFailure names a per-day quota, or a quota whose limit is 0 (the free tier has none
    for the model).
    """
    status = getattr(exc, "status_code", None)
    body = body_text(exc)
    if not (kind.name == "RateLimitError" or status == 429 or "RESOURCE_EXHAUSTED" in body):
        return None
    if "RESOURCE_EXHAUSTED" in body:
        # Gemini says "You exceeded your current quota" for per-minute limits too: only the
        # QuotaFailure's quota id (per day) or a zero limit mark a dead end
        if _GEMINI_DEAD_QUOTA.search(body):
            return "the project's daily or zero quota for this model is spent"
        return None
    if _INSUFFICIENT_QUOTA.search(body):
        return "the account has no quota left (insufficient_quota)"
    return None


def retry_delay_from_body(exc: BaseException) -> float | None:
    """Gemini's 429 puts the wait in the body: google.rpc.RetryInfo `retryDelay: "37s"`."""
    found = _RETRY_DELAY.search(body_text(exc))
    return float(found.group(1)) if found else None


def retry_after_seconds(exc: BaseException) -> float | None:
    """Retry-After from the provider's response headers (seconds or HTTP date), else the
    RetryInfo `retryDelay` in the body (Gemini), if any."""
    header = _retry_after_header(exc)
    return header if header is not None else retry_delay_from_body(exc)


def _retry_after_header(exc: BaseException) -> float | None:
    headers: Any = getattr(exc, "litellm_response_headers", None)
    response = getattr(exc, "response", None)
    if not headers and response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = None
    for name in ("retry-after", "Retry-After", "retry-after-ms"):
        try:
            value = headers.get(name)
        except AttributeError:
            return None
        if value is not None:
            if name == "retry-after-ms":
                return float(value) / 1000.0
            break
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(str(value))
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


__all__ = [
    "classify_kind",
    "error_message",
    "quota_exhausted",
    "refused_shape",
    "retry_after_seconds",
    "retry_delay_from_body",
]
