"""Every failed call's kind, in the words both send paths share: litellm's exceptions
(`classify.classify_litellm_error`) and the direct path's HTTP errors
(`models.litellm.wire.errors`) are each read as an `ErrorKind`, the HTTP statuses from one
table (`STATUS_KINDS`), and `verdicts.classify_kind` makes the same titjudge error of the
same kind. No litellm import here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorKind:
    """What kind of failure an error is, in the words both send paths share."""

    #: the error class named in the failure's reason (litellm's exception class names)
    name: str
    #: True: transient, retried; False: permanent; None: neither is known (left as it is)
    retried: bool | None
    #: the prompt is longer than the model's window (a 400 saying so)
    context_window: bool = False
    #: the provider's content policy refused it (litellm's ContentPolicyViolationError)
    content_policy: bool = False
    #: the provider may have generated (and billed) tokens: a timeout, a connection lost
    #: after the request went out, a reply that could not be read
    maybe_billed: bool = False
    #: no connection was made: nothing reached the provider
    never_connected: bool = False


#: HTTP statuses as error kinds: the OpenAI API's documented codes ("Error codes" guide:
#: 400 bad request, 401 invalid authentication, 403 unsupported region, 404 not found,
#: 422, 429 rate limit or quota, 500 server error, 503 overloaded) under the names litellm
#: maps them to (its `exception_mapping_utils`), so either path names a failure alike; 408,
#: 504 and 524 are timeouts after which the provider may have generated tokens
STATUS_KINDS: dict[int, ErrorKind] = {
    400: ErrorKind("BadRequestError", False),
    401: ErrorKind("AuthenticationError", False),
    403: ErrorKind("PermissionDeniedError", False),
    404: ErrorKind("NotFoundError", False),
    408: ErrorKind("Timeout", True, maybe_billed=True),
    409: ErrorKind("APIError", True),
    422: ErrorKind("UnprocessableEntityError", False),
    429: ErrorKind("RateLimitError", True),
    500: ErrorKind("InternalServerError", True),
    502: ErrorKind("BadGatewayError", True),
    503: ErrorKind("ServiceUnavailableError", True),
    504: ErrorKind("Timeout", True, maybe_billed=True),
    524: ErrorKind("Timeout", True, maybe_billed=True),
}
#: no reply came back in time, or the connection broke after the request went out
TIMEOUT = ErrorKind("Timeout", True, maybe_billed=True)
CONNECTION_LOST = ErrorKind("APIConnectionError", True, maybe_billed=True)
#: no connection was made (refused, DNS, TLS)
NOT_CONNECTED = ErrorKind("APIConnectionError", True, never_connected=True)
#: a 200 whose body is not a chat completion (cut mid-JSON, HTML from a proxy)
UNREADABLE = ErrorKind("APIError", True, maybe_billed=True)
#: a 400 that says the prompt is over the model's window (OpenAI's `context_length_exceeded`
#: code; vLLM's "This model's maximum context length is N tokens"; llama.cpp's "exceeds the
#: available context size"; litellm reads the same wordings into ContextWindowExceededError)
_CONTEXT_WINDOW = re.compile(
    r"context_length_exceeded|maximum context length|context (?:length|window|size)"
    r"|prompt is too long|too many tokens|input is too long",
    re.IGNORECASE,
)


def status_kind(status: int, text: str = "") -> ErrorKind:
    """The kind of an HTTP error status (`text`: the error body, which tells a 400 over the
    context window from another): the table's, else a 5xx is a transient APIError and any
    other status a permanent one."""
    kind = STATUS_KINDS.get(status)
    if kind is None:
        return ErrorKind("APIError", status >= 500)
    if status == 400 and _CONTEXT_WINDOW.search(text):
        return ErrorKind("ContextWindowExceededError", False, context_window=True)
    if status == 400 and re.search(r"content_policy_violation|content_filter", text):
        return ErrorKind("ContentPolicyViolationError", False, content_policy=True)
    return kind


__all__ = [
    "CONNECTION_LOST",
    "NOT_CONNECTED",
    "STATUS_KINDS",
    "TIMEOUT",
    "UNREADABLE",
    "ErrorKind",
    "status_kind",
]
