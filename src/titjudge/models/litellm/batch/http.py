"""The HTTP exchange of the batch APIs titjudge speaks itself (Gemini's, Vertex AI's and
Anthropic's; OpenAI's and Azure's go through litellm's files and batches functions), written
once: each adapter says only how to authenticate and how its provider words an error.

One request goes on the process's shared TLS context (`models.litellm.http`). A timeout or a
network failure is a TransientError naming the request (method and path, never the query,
which may carry a key). An error status is the provider's own words (`BatchHTTP.said`),
classified once for every provider: 408, 409, 429, 5xx and 529 are worth another try (429
as a rate limit, with the server's Retry-After), 401 and 403 are lasting (the key or the
project is refused, so every later request would be too: the model's breaker stops it), any
other status is permanent. The poll, collect and resume loop over these requests is the
batch driver's (`models.calls.batch.jobs`), shared by every provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from titjudge.models.core.base import PermanentError, TransientError
from titjudge.models.litellm.batch.site import SiteAdapter
from titjudge.models.litellm.http import http_client
from titjudge.safety import redact

if TYPE_CHECKING:
    import httpx

#: statuses worth another try: request timeout, conflict (Anthropic's), rate limit, server
#: errors and Anthropic's "overloaded"
TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class BatchHTTP(SiteAdapter):
    """What a batch adapter inherits: its site (`SiteAdapter`) and `exchange` (one request,
    its failures classified). A subclass sets `api_name` and says how its error bodies read
    (`said`)."""

    #: how every reason names the API
    api_name = "batch API"

    def said(self, body: Any, text: str) -> str:
        """What an error reply says: the provider's JSON error body (`body`, None when the
        reply is not JSON), else the start of its text."""
        return text[:300] or "no body"

    async def exchange(
        self, method: str, url: str, *, timeout: float | None = None, **kwargs: Any
    ) -> httpx.Response:
        """One request (`kwargs` as `httpx.AsyncClient.request` takes them); the reply, or its
        failure as TransientError or PermanentError."""
        import httpx

        where = f"{method} {urlsplit(url).path}"
        try:
            async with http_client(timeout if timeout is not None else self._timeout) as client:
                response = await client.request(method, url, **kwargs)
        except httpx.TimeoutException as exc:
            raise TransientError(
                f"{self.api_name}, {where}: timeout ({type(exc).__name__})"
            ) from exc
        except httpx.TransportError as exc:
            raise TransientError(
                redact(f"{self.api_name}, {where}: connection failed: {type(exc).__name__}: {exc}")
            ) from exc
        if response.status_code >= 400:
            raise self.refusal(response, where)
        return response

    def refusal(self, response: httpx.Response, where: str) -> Exception:
        """An error reply as titjudge's error (see the module)."""
        code = int(response.status_code)
        try:
            body = response.json()
        except ValueError:
            body = None
        said = self.said(body, response.text)
        reason = redact(f"{self.api_name}, {where}: HTTP {code} {said}".replace("\n", " "))
        if code in TRANSIENT_STATUS or code >= 500:
            return TransientError(reason, _retry_after(response), rate_limited=code == 429)
        if code == 401:
            return PermanentError(reason, lasting="401 unauthorized (the API key was refused)")
        if code == 403:
            return PermanentError(reason, lasting="403 forbidden")
        return PermanentError(reason)


def google_said(body: Any, text: str) -> str:
    """Google's error body, `{"error": {"code", "message", "status"}}` (Gemini, Vertex AI)."""
    found = body.get("error") if isinstance(body, dict) else None
    if not isinstance(found, dict):
        return text[:300] or "no body"
    return f"{found.get('status') or found.get('code') or 'error'}: {found.get('message') or ''}"


def _retry_after(response: httpx.Response) -> float | None:
    """The server's Retry-After in seconds, when it sent one as a number."""
    wait = response.headers.get("retry-after")
    try:
        return float(wait) if wait is not None else None
    except ValueError:
        return None


__all__ = ["TRANSIENT_STATUS", "BatchHTTP", "google_said"]
