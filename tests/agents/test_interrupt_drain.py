"""Ctrl-C keeps the answers already on their way (`models.calls.drain`, `run.loop`).

Through real litellm and real HTTP: three judge calls are at the fake server (which answers
each after a pause) when SIGINT arrives. The run stops sending (a call started after the
signal never reaches the server), lets the three come back, stores them, and only then is
cancelled: `run_to_end` raises KeyboardInterrupt, and a fresh client finds all three in the
cache. Before, the three were cancelled with the run (the server saw them hang up) and a
re-run asked for them again. The grace is raised so that a loaded machine cannot run it
out: what is checked is what is kept, not how fast.
"""

from __future__ import annotations

import asyncio
import signal

import pytest
from doubles.server import FakeOpenAIServer

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.calls import drain
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.run.loop import run_to_end

PROMPTS = [f"PROMPT:\na red fox {i}\n\nDESCRIPTION:\na red fox {i} on snow" for i in range(5)]


def judge_client(server: FakeOpenAIServer, cache: CallCache):
    hub = ModelHub(cache, default_concurrency=8)
    options = ModelOptions(api_base=server.url, backoff_initial=0.0, max_attempts=1)
    return hub, hub.text_client("litellm:openai/judge", options)


def ask(client, prompt: str):
    return client.structured(GenerateRequest(prompt=prompt), JudgeVerdict, role="j", probe=SEND)


@pytest.fixture
def default_sigint():
    """`run_to_end` answers SIGINT only where the default handler is in place."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_stores_the_answers_on_the_wire_and_sends_nothing_new(
    tmp_path, monkeypatch, default_sigint
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")
    monkeypatch.setattr(drain, "GRACE_SECONDS", 60.0)
    with FakeOpenAIServer(responder="judge", latency=1.0) as server:
        cache = CallCache(tmp_path / "cache")
        hub, client = judge_client(server, cache)

        async def late() -> None:  # a call the run would make after the signal
            while not drain.for_loop().stopping:
                await asyncio.sleep(0.01)
            await ask(client, PROMPTS[3])

        async def run() -> None:
            await ask(client, PROMPTS[4])  # litellm's first call makes its HTTP client alone
            follower = asyncio.ensure_future(late())
            calls = [asyncio.ensure_future(ask(client, p)) for p in PROMPTS[:3]]
            for _ in range(3000):  # all three at the server, waiting on it
                if server.stats.in_flight == 3:
                    break
                await asyncio.sleep(0.01)
            else:
                pytest.fail(f"{server.stats.in_flight} of the 3 calls reached the server")
            signal.raise_signal(signal.SIGINT)
            try:
                await asyncio.gather(follower, *calls)
            finally:
                await hub.aclose()

        with pytest.raises(KeyboardInterrupt):
            run_to_end(run())
        by_status = dict(server.stats.by_status)
        total = server.stats.total

    assert total == 4 and by_status == {200: 4}, by_status  # the late call was never sent
    again = CallCache(tmp_path / "cache")
    with FakeOpenAIServer(responder="judge") as second:
        hub, client = judge_client(second, again)

        async def rerun():
            try:
                return await asyncio.gather(*(ask(client, p) for p in PROMPTS[:3]))
            finally:
                await hub.aclose()

        results = asyncio.run(rerun())
        asked = second.stats.total
    assert all(r.ok and r.cached for r in results)
    assert asked == 0  # nothing answered before the interrupt is asked for again
