"""The batch adapters' one HTTP exchange (`models.litellm.batch.http.BatchHTTP`), against a
real HTTP server on 127.0.0.1 answering as the providers document their errors:

- Google (Gemini API, Vertex AI): `{"error": {"code": 400, "message": "...", "status":
  "INVALID_ARGUMENT"}}`, https://cloud.google.com/apis/design/errors#http_mapping and
  https://ai.google.dev/gemini-api/docs/troubleshooting (429 RESOURCE_EXHAUSTED, 500 INTERNAL,
  503 UNAVAILABLE);
- Anthropic: `{"type": "error", "error": {"type": "rate_limit_error", "message": "..."}}`, with
  `retry-after` on a 429, 409 `conflict_error` and 529 `overloaded_error` worth a retry,
  https://docs.claude.com/en/api/errors and https://docs.claude.com/en/api/rate-limits
  (as summarised at learn.microsoft.com/en-us/microsoft-cloud/dev/dev-proxy/concepts/
  anthropic-529-overloaded-error: every Claude API error has that body; 529 and 429 differ).

Google's 409 is ABORTED (worth a retry) or ALREADY_EXISTS (not): the shared classification
retries both, a few attempts wasted on the second (noted, not split here).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

from titjudge.models.core.base import PermanentError, TransientError
from titjudge.models.litellm.batch.anthropic import AnthropicBatchAPI
from titjudge.models.litellm.batch.gemini import GeminiBatchAPI
from titjudge.models.litellm.batch.http import BatchHTTP
from titjudge.models.litellm.batch.vertex import VertexBatchAPI

GOOGLE_400 = {
    "error": {"code": 400, "message": "Invalid JSONL line 3", "status": "INVALID_ARGUMENT"}
}
ANTHROPIC_429 = {
    "type": "error",
    "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded"},
}


class Plain(BatchHTTP):
    api_name = "Test batch API"

    def __init__(self, timeout: float = 5.0):
        self._timeout = timeout


async def _answer(status: int, body: Any, headers: dict[str, str] | None = None):
    """A server answering every request with `status` and `body`; (its URL, its runner)."""

    async def handler(request: web.Request) -> web.Response:
        text = body if isinstance(body, str) else json.dumps(body)
        return web.Response(status=status, text=text, headers=headers or {})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return f"http://127.0.0.1:{port}", runner


def _raised(adapter: BatchHTTP, status: int, body: Any, headers=None, path="/v1/batches"):
    async def go() -> BaseException:
        url, runner = await _answer(status, body, headers)
        try:
            await adapter.exchange("GET", f"{url}{path}?key=SECRET-IN-QUERY")
        except (TransientError, PermanentError) as exc:
            return exc
        finally:
            await runner.cleanup()
        raise AssertionError(f"HTTP {status} was taken as an answer")

    return asyncio.run(go())


def test_google_error_body_is_named_and_a_400_is_permanent():
    for adapter in (
        GeminiBatchAPI.__new__(GeminiBatchAPI),
        VertexBatchAPI.__new__(VertexBatchAPI),
    ):
        adapter._timeout = 5.0
        exc = _raised(adapter, 400, GOOGLE_400)
        assert isinstance(exc, PermanentError) and exc.lasting is None
        assert "HTTP 400 INVALID_ARGUMENT: Invalid JSONL line 3" in str(exc)
        assert str(exc).startswith(f"{adapter.api_name}, GET /v1/batches: ")
        assert "SECRET-IN-QUERY" not in str(exc)


def test_anthropic_429_is_a_rate_limit_with_its_retry_after():
    adapter = AnthropicBatchAPI.__new__(AnthropicBatchAPI)
    adapter._timeout = 5.0
    exc = _raised(adapter, 429, ANTHROPIC_429, {"retry-after": "7"})
    assert isinstance(exc, TransientError)
    assert (exc.rate_limited, exc.retry_after) == (True, 7.0)
    assert "HTTP 429 rate_limit_error: Number of request tokens" in str(exc)


@pytest.mark.parametrize(
    ("status", "kind", "lasting"),
    [
        (408, TransientError, None),
        (500, TransientError, None),
        (503, TransientError, None),
        (529, TransientError, None),
        (401, PermanentError, "401 unauthorized (the API key was refused)"),
        (403, PermanentError, "403 forbidden"),
        (404, PermanentError, None),
        (413, PermanentError, None),
    ],
)
def test_each_status_is_classified_once_for_every_provider(status, kind, lasting):
    exc = _raised(Plain(), status, "<html>upstream said no</html>")
    assert type(exc) is kind and exc.lasting == lasting
    assert f"Test batch API, GET /v1/batches: HTTP {status} <html>upstream said no</html>" == str(
        exc
    )
    if kind is TransientError:
        assert not exc.rate_limited and exc.retry_after is None


def test_no_server_is_a_transient_connection_failure_without_the_query():
    async def go() -> BaseException:
        url, runner = await _answer(200, {})
        await runner.cleanup()  # the port is closed now
        try:
            await Plain().exchange("POST", f"{url}/upload/v1beta/files?key=SECRET-IN-QUERY")
        except TransientError as exc:
            return exc
        raise AssertionError("a closed port answered")

    exc = asyncio.run(go())
    assert str(exc).startswith("Test batch API, POST /upload/v1beta/files: connection failed: ")
    assert "SECRET-IN-QUERY" not in str(exc)


def test_a_reply_that_never_comes_is_a_transient_timeout():
    async def go() -> BaseException:
        release = asyncio.Event()

        async def slow(request: web.Request) -> web.Response:
            await release.wait()  # answers only after the client gave up
            return web.Response(text="{}")

        app = web.Application()
        app.router.add_get("/v1/batches", slow)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        try:
            await Plain(timeout=0.2).exchange("GET", f"http://127.0.0.1:{port}/v1/batches")
        except TransientError as exc:
            return exc
        finally:
            release.set()
            await runner.cleanup()
        raise AssertionError("a reply came")

    exc = asyncio.run(go())
    assert str(exc) == "Test batch API, GET /v1/batches: timeout (ReadTimeout)"


def test_a_2xx_reply_is_returned_as_it_came():
    async def go() -> tuple[int, Any]:
        url, runner = await _answer(200, {"name": "batches/123"})
        try:
            reply = await Plain().exchange("GET", f"{url}/v1beta/batches/123")
            return reply.status_code, reply.json()
        finally:
            await runner.cleanup()

    assert asyncio.run(go()) == (200, {"name": "batches/123"})
