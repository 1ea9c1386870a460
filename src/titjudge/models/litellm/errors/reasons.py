"""Why a call failed, beyond transient or permanent: refused before any token (so it cost
$0), or refused for its content by a provider's filter (so it counts as blocked). Used by
`models.litellm.errors.verdicts.classify_kind`, for either send path; no litellm import.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from titjudge.models.core.base import BlockedError

if TYPE_CHECKING:
    from titjudge.models.litellm.errors.kinds import ErrorKind

#: statuses after which the provider may have generated (and billed) tokens: timeouts
_MAYBE_BILLED = frozenset({408, 504, 524})
_NO_CONNECTION = re.compile(
    r"connection (?:error|refused)|name or service not known|nodename nor servname", re.I
)


def refused_before_tokens(exc: BaseException, kind: ErrorKind) -> bool:
    """Whether the provider refused `exc`'s request (of `kind`) before any token: it answered
    with an error status (401, 429, 400, 5xx: OpenAI and OpenRouter bill no tokens for an
    error response), or no connection was made. A timeout, or a reply that could not be read,
    may have been billed: unknown."""
    if kind.never_connected:
        return True
    if kind.maybe_billed:
        return False
    if kind.name == "APIConnectionError" or "Connection error" in str(exc):
        return bool(_NO_CONNECTION.search(str(exc)))
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and 400 <= status < 600 and status not in _MAYBE_BILLED


def content_filter(exc: BaseException, message: str, kind: ErrorKind) -> BlockedError | None:
    """An Azure OpenAI content filter's 400 on the prompt (`code: "content_filter"`,
    `innererror.code: "ResponsibleAIPolicyViolation"`; Azure OpenAI "Content filtering"
    doc), or any error of the content-policy kind (litellm's ContentPolicyViolationError), as a blocked failure
    naming the filter's code. litellm recognises Azure's filter by its message text only
    (1.110 raises a plain BadRequestError for the doc's own wording), so the body's code
    decides."""
    body = _error_body(exc)
    inner = body.get("innererror") or body.get("inner_error")
    filtered = kind.content_policy or (body.get("code") == "content_filter")
    if not filtered:
        return None
    code = inner.get("code") if isinstance(inner, dict) else None
    return BlockedError(
        "blocked: the provider's content filter refused the request"
        f"{f' ({code})' if code else ''}: {message}"
    )


def _error_body(exc: BaseException) -> dict[str, Any]:
    """The provider's `error` object as the exception carries it (openai's `body`, else the
    HTTP response's JSON), or {}."""
    body = getattr(exc, "body", None)
    if not isinstance(body, dict):
        response = getattr(exc, "response", None)
        try:
            body = json.loads(response.text) if response is not None else None
        except Exception:  # a streamed or closed response, or no JSON
            body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    return body if isinstance(body, dict) else {}


__all__ = ["content_filter", "refused_before_tokens"]
