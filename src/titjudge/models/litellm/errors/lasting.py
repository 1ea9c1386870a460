"""Which litellm errors will not heal within a run (`lasting_reason`): the model's circuit
breaker (`models.calls.breaker`) counts them. Read from the error's status code and causes,
so this module needs no litellm import."""

from __future__ import annotations

import contextlib
import re
import socket
import ssl

_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


def lasting_reason(exc: BaseException, where: str | None = None) -> str | None:
    """Why every request to this endpoint will fail for the rest of the run, in a few words,
    or None: the connection refused, the host unknown (DNS), the TLS handshake failed (found in
    the exception's causes, whichever HTTP client litellm used), the key refused (401), access
    denied (403), the model unknown (404), or a client package the provider needs missing
    (litellm imports e.g. google.auth for Vertex AI only when a call is made)."""
    status = getattr(exc, "status_code", None)
    seen: set[int] = set()
    cause: BaseException | None = exc
    at = f" ({where})" if where else ""
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused{at}"
        if isinstance(cause, socket.gaierror):
            return f"DNS lookup failed{at}"
        if isinstance(cause, ssl.SSLError | ssl.CertificateError):
            return f"TLS handshake failed{at}"
        if isinstance(cause, ImportError) and cause.name:
            return f"missing client package {cause.name}"
        cause = cause.__cause__ or cause.__context__
    missing = _MISSING_MODULE.search(str(exc))
    if missing:
        return f"missing client package {missing.group(1)}"
    if status == 401:  # litellm's AuthenticationError, PermissionDeniedError, NotFoundError
        return "401 unauthorized (the API key was refused)"
    if status == 403:
        return "403 forbidden"
    if status == 404:
        return "404 model not found"
    return None


__all__ = ["lasting_reason"]


def body_text(exc: BaseException) -> str:
    """Everything the exception carries of the provider's reply body: its message, its text
    and its HTTP response's (a streamed or closed response has none to give)."""
    parts = [str(getattr(exc, "message", None) or ""), str(exc)]
    response = getattr(exc, "response", None)
    if response is not None:
        with contextlib.suppress(Exception):
            parts.append(str(response.text))
    return "\n".join(parts)
