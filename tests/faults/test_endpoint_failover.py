"""One model on two endpoints (`api_base: [url, url]`): both are used, one is really stopped
mid-run, and no call is lost; when every endpoint is down, calls end as failure records.

The endpoints are two loopback OpenAI-compatible servers (doubles.server); a stopped one
refuses connections and cuts the requests it had in flight, which titjudge classifies as a
transient failure (see the doubles.server docstring).
"""

from __future__ import annotations

import asyncio

import pytest
from doubles.server import FakeOpenAIServer

from titjudge.cache.store import CallCache
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub

MODEL = "litellm:openai/test-model"
#: calls after the warm-up, of which the second endpoint is stopped 8 in: the survivor must
#: take over half of them (it was 80; every call is one more litellm call, its cost counted)
CALLS = 40


def _client(cache_dir, urls, **options):
    opts = ModelOptions(
        api_base=urls,
        **{"concurrency": 4, "backoff_initial": 0.05, "backoff_max": 0.5, "timeout": 30, **options},
    )
    return ModelHub(CallCache(cache_dir)).text_client(MODEL, opts)


async def _ask(client, prompts):
    return await asyncio.gather(
        *(
            client.text(GenerateRequest(prompt=p, max_tokens=16), role="describer", probe=SEND)
            for p in prompts
        )
    )


@pytest.mark.slow
def test_a_stopped_endpoint_loses_no_call(tmp_path):
    first, second = FakeOpenAIServer(latency=0.05), FakeOpenAIServer(latency=0.05)
    first.start()
    second.start()
    try:
        client = _client(tmp_path / "cache", [first.url, second.url])

        async def run():
            warmup = await _ask(client, [f"warm-up {i}" for i in range(16)])
            used = (first.stats.total, second.stats.total)
            calls = asyncio.ensure_future(_ask(client, [f"item {i}" for i in range(CALLS)]))
            while second.stats.total < used[1] + 8:  # mid-run: the second server is busy
                await asyncio.sleep(0.01)
            await asyncio.to_thread(second.stop)
            return warmup, used, await calls

        warmup, used, results = asyncio.run(run())
        # both endpoints answered before one was stopped
        assert all(r.ok for r in warmup)
        assert used[0] > 0 and used[1] > 0
        # not one call lost: every item has its answer, the survivor took the rest
        assert [r.ok for r in results] == [True] * CALLS, [r.error for r in results if not r.ok]
        assert all(r.value for r in results)
        assert first.stats.total > used[0] + CALLS // 2
    finally:
        first.stop()
        second.stop()


@pytest.mark.slow
def test_a_cached_rerun_asks_neither_endpoint(tmp_path):
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        prompts = [f"item {i}" for i in range(16)]
        fresh = asyncio.run(_ask(_client(tmp_path / "cache", [first.url, second.url]), prompts))
        asked = first.stats.total + second.stats.total
        assert asked == 16 and first.stats.total > 0 and second.stats.total > 0
        # one cache key per model whichever replica answered: a re-run, over the endpoints in
        # another order or over one of them alone, is answered from the cache
        for urls in ([second.url, first.url], first.url):
            again = asyncio.run(_ask(_client(tmp_path / "cache", urls), prompts))
            assert all(r.cached for r in again)
            assert [r.value for r in again] == [r.value for r in fresh]
        assert first.stats.total + second.stats.total == asked


@pytest.mark.slow
def test_every_endpoint_down_is_a_failure_record(tmp_path):
    servers = [FakeOpenAIServer(), FakeOpenAIServer()]
    urls = [server.start() for server in servers]
    for server in servers:
        server.stop()  # both ports now refuse connections
    client = _client(tmp_path / "cache", urls, max_attempts=3, backoff_max=0.05, timeout=10)
    (result,) = asyncio.run(_ask(client, ["nobody home"]))
    assert not result.ok and result.value is None
    assert result.error.startswith("gave up after 3 attempts")
    assert result.attempts == 3


@pytest.mark.slow
def test_calls_wait_for_a_slot_while_an_endpoint_is_down(tmp_path):
    """With one of two endpoints down, the model still has 2 x concurrency in flight: the
    calls beyond the live endpoint's slots wait for one (as its own queue would) instead of
    failing attempts, and the live endpoint never has more than its concurrency."""
    dead = FakeOpenAIServer()
    dead_url = dead.start()
    dead.stop()
    with FakeOpenAIServer(latency=0.1) as live:
        client = _client(tmp_path / "cache", [dead_url, live.url], concurrency=2)
        results = asyncio.run(_ask(client, [f"item {i}" for i in range(16)]))
        assert all(r.ok for r in results)
        assert live.stats.max_in_flight <= 2 and live.stats.total == 16
        # a call may lose one attempt to the endpoint going down, none to waiting for a slot
        assert max(r.attempts for r in results) <= 2
