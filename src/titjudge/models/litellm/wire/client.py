"""Posting a request on the direct path, and reading its reply as the litellm path does.

One `aiohttp.ClientSession` per endpoint and event loop, shared by every model at that
endpoint (the describer and the judge on one vLLM server share its connections) and closed
when the last of them closes (`WirePool`); its connection pool is not capped (each model's
limiter is the cap in flight, `models.calls.limits`), on the shared TLS context
(`litellm.http`). aiohttp, not httpx: measured on loopback, 2,000 judge-sized calls, httpx
spends 0.87 ms of CPU a call at concurrency 16 and 1.72 ms at 64 (its pool asks every idle
connection whether it expired, through anyio, on each request), aiohttp 0.19 and 0.16
(benchmarks/RESULTS.md, section 23). The reply is read by `reply.generation_from`, the litellm
path's reader, after what litellm does to a reply on its way: a finish reason in a server's
own words made OpenAI's (`map_finish_reason`), a leading `<think>` block moved to the
reasoning, and the price worked out from the same price map
(`models.core.prices.litellm_rates`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from titjudge.models.core.base import Generation
from titjudge.models.core.prices import Rates, litellm_rates, reply_cost
from titjudge.models.litellm.http import tls_context
from titjudge.models.litellm.reply import generation_from
from titjudge.models.litellm.wire.body import WireRoute, encode, wire_body, wire_headers
from titjudge.models.litellm.wire.errors import status_error, transport_error, unreadable
from titjudge.safety import register_secret

if TYPE_CHECKING:
    import aiohttp


@dataclass(frozen=True)
class WireReply:
    """What came back: the status, the headers (case-insensitive) and the body's bytes."""

    status_code: int
    headers: Any
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


#: finish reasons in servers' and providers' own words, as OpenAI's (litellm's
#: `map_finish_reason`: TGI's `eos_token`, Anthropic's `end_turn` and `max_tokens`, ...)
FINISH_REASONS = {
    "stop_sequence": "stop",
    "end_turn": "stop",
    "eos": "stop",
    "eos_token": "stop",
    "STOP": "stop",
    "max_tokens": "length",
    "MAX_TOKENS": "length",
    "tool_use": "tool_calls",
}
#: a reasoning block leading a reply's content, which litellm moves to `reasoning_content`
#: (its `_parse_content_for_reasoning`: `<think>` or `<thinking>` at the very start)
_LEADING_THINKING = re.compile(r"<(?:think|thinking)>(.*?)</(?:think|thinking)>(.*)", re.DOTALL)
#: the variable litellm reads a provider's key from when the config names none
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}
#: how long after the model's timeout a request is dropped here, where nothing else drops it
BACKSTOP_SECONDS = 1.0
#: seconds an idle connection is kept open for the next request
KEEPALIVE_SECONDS = 30.0


class WirePool:
    """The sessions of this process, one per (event loop, endpoint), counted by their users."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, list[Any]]
        ] = weakref.WeakKeyDictionary()

    def acquire(self, base: str) -> aiohttp.ClientSession:
        """The running loop's session for `base`, one more user counted."""
        import aiohttp

        loop = asyncio.get_running_loop()
        sessions = self._sessions.setdefault(loop, {})
        entry = sessions.get(base)
        if entry is None or entry[0].closed:
            connector = aiohttp.TCPConnector(
                limit=0, keepalive_timeout=KEEPALIVE_SECONDS, ssl=tls_context()
            )
            session = aiohttp.ClientSession(connector=connector)
            entry = sessions[base] = [session, 0]
        entry[1] += 1
        return entry[0]  # type: ignore[no-any-return]

    async def release(self, base: str, session: aiohttp.ClientSession) -> None:
        """One user fewer; the session is closed when none is left."""
        sessions = self._sessions.get(asyncio.get_running_loop(), {})
        entry = sessions.get(base)
        if entry is None or entry[0] is not session:
            await session.close()
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del sessions[base]
            await session.close()

    def open_clients(self) -> int:
        """How many sessions are open (the tests read it)."""
        return sum(
            1 for sessions in self._sessions.values() for e in sessions.values() if not e[0].closed
        )


POOL = WirePool()


class WireClient:
    """One model's requests on the direct path."""

    def __init__(self, route: WireRoute, model_id: str, key: str | None):
        self.route = route
        self.key = key or os.environ.get(KEY_VARIABLES.get(route.provider, "")) or None
        register_secret(self.key)
        self.headers = wire_headers(route, self.key)
        #: the proxy the environment names for the endpoint (HTTP(S)_PROXY, NO_PROXY, as httpx
        #: and so litellm honour them), read once: the endpoint does not change
        self.proxy = proxy_for(route.base)
        #: litellm's price of the model (None: it has none, and the cost is unknown)
        self.rates: Rates | None = litellm_rates(model_id)
        self._client: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def request(self, kwargs: dict[str, Any]) -> tuple[str, dict[str, str], bytes]:
        """The URL, headers and bytes of one request (`titjudge explain` shows them)."""
        return self.route.url, self.headers, encode(self.route, wire_body(self.route, kwargs))

    async def send(self, kwargs: dict[str, Any]) -> Generation:
        """Post one request as built by `LiteLLMBackend.request_kwargs`; its reply as a
        Generation, or a `WireError`."""
        import aiohttp

        url, headers, content = self.request(kwargs)
        session = self._pooled()
        # the call layer bounds each attempt by the model's timeout (`models.calls.sending`:
        # "no reply within N s"); this bound, a second later, holds a caller without it
        limit = kwargs.get("timeout")
        timeout = aiohttp.ClientTimeout(total=None if limit is None else limit + BACKSTOP_SECONDS)
        try:
            async with session.post(
                url, data=content, headers=headers, timeout=timeout, proxy=self.proxy
            ) as response:
                reply = WireReply(response.status, response.headers, await response.read())
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            raise transport_error(exc) from exc
        if reply.status_code >= 400:
            raise status_error(reply)
        try:
            data = json.loads(reply.content)
        except ValueError as exc:
            raise unreadable(f"{exc} ({len(reply.content)} bytes)") from None
        if not isinstance(data, dict):
            raise unreadable(f"a JSON {type(data).__name__}")
        _as_litellm_reads(data)
        generation = generation_from(data)
        if self.rates is not None:
            generation.cost = reply_cost(self.rates, generation)
        return generation

    def _pooled(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.closed:
            self._client = POOL.acquire(self.route.base)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await POOL.release(self.route.base, client)


def proxy_for(base: str) -> str | None:
    """The proxy URL the environment names for `base`, or None (none set, or NO_PROXY
    bypasses the host)."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(base)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _as_litellm_reads(data: dict[str, Any]) -> None:
    """What litellm does to each choice of a reply before titjudge reads it: the finish
    reason in OpenAI's words, a leading reasoning block moved out of the content."""
    for choice in data.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish in FINISH_REASONS:
            choice["finish_reason"] = FINISH_REASONS[finish]
        message = choice.get("message")
        if not isinstance(message, dict) or message.get("reasoning_content") is not None:
            continue
        content = message.get("content")
        found = _LEADING_THINKING.match(content) if isinstance(content, str) else None
        if found is not None:
            message["reasoning_content"], message["content"] = found.group(1), found.group(2)


__all__ = ["FINISH_REASONS", "POOL", "WireClient", "WirePool", "WireReply"]
