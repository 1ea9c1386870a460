"""Retries show as they happen: the hub counts every attempt sent again after a transient
error, with the error's kind, while the call that retries is still in flight, and the
progress line says so (`· retries N (last: KIND) ·`)."""

from __future__ import annotations

import asyncio

from doubles.server import FakeOpenAIServer, Fault, Reply

from titjudge.cache.store import CallCache
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records import Progress
from titjudge.report.progress import stats_text


def test_a_retry_is_counted_before_its_call_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")
    seen_in_flight: list[tuple[int, str | None]] = []

    async def go(url):
        hub = ModelHub(CallCache(tmp_path / "c"))
        client = hub.text_client(
            "litellm:openai/m", ModelOptions(api_base=url, backoff_initial=0, backoff_max=0)
        )
        assert hub.retries() == (0, None)
        call = asyncio.create_task(
            client.text(GenerateRequest(prompt="hi"), role="describer", probe=SEND)
        )
        while not call.done():
            if hub.retries()[0]:
                seen_in_flight.append(hub.retries())
            await asyncio.sleep(0.01)
        result = await call
        await hub.aclose()
        return result

    with FakeOpenAIServer() as server:
        server.script(Fault("503"), Reply(content="answered after a retry", delay=1.0))
        result = asyncio.run(go(server.url))
    assert result.ok and result.attempts == 2
    assert seen_in_flight, "the retry was not counted while its call was in flight"
    count, kind = seen_in_flight[0]
    assert count == 1 and kind is not None and "ServiceUnavailable" in kind


def test_the_progress_line_shows_retries_only_when_there_are_some():
    quiet = stats_text(Progress(total=3))
    assert "retries" not in quiet
    busy = stats_text(Progress(total=3, retries=lambda: (7, "RateLimitError")))
    assert "· retries 7 (last: RateLimitError) ·" in busy
