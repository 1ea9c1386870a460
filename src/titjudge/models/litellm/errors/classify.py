"""litellm's exceptions as titjudge's error classes (`classify_litellm_error`): each exception
read as its kind (`kinds.ErrorKind`, by its class, the way the direct path reads an HTTP
status from the same table), then classified by `verdicts.classify_kind`, the one
classification of text and embedding calls on either path.
"""

from __future__ import annotations

from titjudge.models.litellm.errors.kinds import (
    STATUS_KINDS,
    TIMEOUT,
    ErrorKind,
)
from titjudge.models.litellm.errors.verdicts import classify_kind
from titjudge.models.litellm.loaded import litellm_module

litellm = litellm_module()

_TRANSIENT = (
    litellm.RateLimitError,
    litellm.Timeout,
    litellm.APIConnectionError,
    litellm.InternalServerError,
    litellm.ServiceUnavailableError,
    litellm.BadGatewayError,
)
_PERMANENT = (
    litellm.BadRequestError,  # includes ContextWindowExceededError, UnsupportedParamsError
    litellm.AuthenticationError,
    litellm.PermissionDeniedError,
    litellm.NotFoundError,
    litellm.UnprocessableEntityError,
)


def classify_litellm_error(exc: BaseException, where: str | None = None) -> BaseException:
    """A litellm exception as TransientError / PermanentError / QuotaExhaustedError /
    BlockedError (as is when none): see `verdicts.classify_kind`."""
    return classify_kind(exc, litellm_kind(exc), where)


def litellm_kind(exc: BaseException) -> ErrorKind:
    """The kind of a litellm exception (neither retried nor permanent: one titjudge does not
    know, which only a lasting reason, such as a missing package, classifies)."""
    name = type(exc).__name__
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return ErrorKind(name, False, content_policy=True)
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ErrorKind(name, False, context_window=True)
    if isinstance(exc, _PERMANENT):
        return ErrorKind(name, False)
    if isinstance(exc, litellm.Timeout):
        return TIMEOUT
    if isinstance(exc, _TRANSIENT):  # a connection error's text tells whether it got through
        return ErrorKind(name, True)
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.APIError):
        if status is None or int(status) >= 500 or int(status) == 429:
            return ErrorKind(name, True)
        return ErrorKind(name, None)
    return _sdk_kind(exc, status)


def _sdk_kind(exc: BaseException, status: object) -> ErrorKind:
    """An error of the OpenAI SDK itself, which litellm's files and batches functions raise
    unmapped: a lost connection or a timeout may heal, a status is read from the table (a
    408, 409, 429 or 5xx may heal, another will not); anything else stays as it is."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
        return ErrorKind(type(exc).__name__, True)
    if not isinstance(exc, openai.APIStatusError) or not isinstance(status, int):
        return ErrorKind(type(exc).__name__, None)
    table = STATUS_KINDS.get(status)
    retried = table.retried if table is not None else status >= 500
    return ErrorKind(type(exc).__name__, retried)


__all__ = ["classify_litellm_error", "litellm_kind"]
