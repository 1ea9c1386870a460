"""The direct path's failures, shaped as the classification reads litellm's: an HTTP error
status with the provider's body (`WireError`: `status_code`, `message`, the `response`
with its headers and text), a timeout, a connection that failed or broke, a 200
that is no chat completion; each names its kind from `errors.kinds`, so
`classify_wire_error` gives the titjudge error the litellm path gives the same failure.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from titjudge.models.litellm.errors.kinds import (
    CONNECTION_LOST,
    NOT_CONNECTED,
    TIMEOUT,
    UNREADABLE,
    ErrorKind,
    status_kind,
)
from titjudge.models.litellm.errors.verdicts import classify_kind


class WireError(Exception):
    """A failed request on the direct path, of `kind`."""

    def __init__(
        self,
        message: str,
        kind: ErrorKind,
        *,
        status_code: int | None = None,
        response: Any = None,
        body: Any = None,
    ):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status_code = status_code
        #: the reply (`client.WireReply`: its headers carry Retry-After; its text the body)
        self.response = response
        #: the provider's error body, parsed (OpenAI's `{"error": {...}}`), else None
        self.body = body


def status_error(response: Any) -> WireError:
    """An HTTP error reply as a WireError: the provider's `error.message` (OpenAI's error
    object, which vLLM, SGLang, llama.cpp and TGI send alike), else the body's text."""
    text = response.text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    said = error.get("message") if isinstance(error, dict) else error
    if not isinstance(said, str) or not said.strip():
        said = (body.get("message") if isinstance(body, dict) else None) or text or "no body"
    status = int(response.status_code)
    return WireError(
        f"Error code: {status} - {said}",
        status_kind(status, text),
        status_code=status,
        response=response,
        body=body,
    )


def unreadable(why: str) -> WireError:
    """A 200 whose body is not a chat completion."""
    return WireError(f"the provider's reply is not a chat completion: {why}", UNREADABLE)


def transport_error(exc: BaseException) -> WireError:
    """An aiohttp transport failure as a WireError (chained to it, so a refused connection,
    a failed DNS lookup or TLS handshake below it is found by `lasting_reason`): a timeout,
    no connection made, or a connection that broke after the request went out."""
    import aiohttp

    said = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return WireError(f"Request timed out before a connection was made: {said}", NOT_CONNECTED)
    if isinstance(exc, asyncio.TimeoutError):  # aiohttp's SocketTimeoutError included
        return WireError(f"Request timed out: {said}", TIMEOUT)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return WireError(f"Connection error: {said}", NOT_CONNECTED)
    return WireError(f"Connection error: {said}", CONNECTION_LOST)


def classify_wire_error(exc: WireError, where: str | None = None) -> BaseException:
    """The titjudge error of a direct-path failure (`errors.verdicts.classify_kind`)."""
    return classify_kind(exc, exc.kind, where)


__all__ = ["WireError", "classify_wire_error", "status_error", "transport_error", "unreadable"]
