"""The circuit breaker per model (`models.calls.breaker`): ordinary transient trouble (429,
5xx, timeouts) never trips it, a success resets it, `stop_after: 0` switches it off, and a
client package the provider needs but that is missing stops the model: at the backend's build
when the provider table knows it (Vertex AI's google.auth on a plain install), else after
stop_after calls, instead of retrying every item."""

from __future__ import annotations

import asyncio
import importlib.abc
import sys

import pytest
from doubles.server import FakeOpenAIServer, Fault, Reply

from titjudge.cache.store import CallCache
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub

FAST = {"backoff_initial": 0.01, "backoff_max": 0.05}


def _client(tmp_path, model, stop_after=5, **options):
    hub = ModelHub(CallCache(tmp_path / "cache"), stop_after=stop_after)
    return hub.text_client(model, ModelOptions(**{**FAST, **options}))


def _ask(client, n):
    async def all_of_them():
        return await asyncio.gather(
            *(
                client.text(GenerateRequest(prompt=f"item {i}"), role="describer", probe=SEND)
                for i in range(n)
            )
        )

    return asyncio.run(all_of_them())


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@pytest.mark.slow
def test_transient_errors_never_stop_a_model(tmp_path):
    faults = iter([Fault("429", retry_after=0.0), Fault("500"), Fault("503"), Fault("timeout")])
    with FakeOpenAIServer(
        responder=lambda request: Reply(fault=next(faults, Fault("500"))), timeout_delay=1.5
    ) as server:
        client = _client(
            tmp_path, "litellm:openai/vlm", api_base=server.url, max_attempts=2, timeout=1.0
        )
        results = _ask(client, 8)  # 16 transient failures, over 3 times stop_after
        assert not any(r.ok for r in results)
        assert not client.breaker.stopped
        assert server.stats.total == 16  # every call got its retries
        assert not any("not sent" in (r.error or "") for r in results)


@pytest.mark.slow
def test_a_success_resets_the_count(tmp_path):
    replies = [Fault("401")] * 4 + ["fine"]

    def answer(request):
        reply = replies[(answer.count) % len(replies)]
        answer.count += 1
        return Reply(fault=reply) if isinstance(reply, Fault) else Reply(content=reply)

    answer.count = 0
    with FakeOpenAIServer(responder=answer) as server:
        client = _client(tmp_path, "litellm:openai/vlm", api_base=server.url, concurrency=1)
        results = _ask(client, 10)  # 8 permanent failures, never 5 in a row
        assert sum(r.ok for r in results) == 2
        assert not client.breaker.stopped and server.stats.total == 10


@pytest.mark.slow
def test_stop_after_zero_never_stops(tmp_path):
    with FakeOpenAIServer(responder=lambda request: Reply(fault=Fault("401"))) as server:
        client = _client(tmp_path, "litellm:openai/vlm", stop_after=0, api_base=server.url)
        results = _ask(client, 8)  # more than the default stop_after (5) in a row
        assert server.stats.total == 8 and not client.breaker.stopped
        assert all(r.error.startswith("401 unauthorized") for r in results)


class _NoGoogleAuth(importlib.abc.MetaPathFinder):
    """A plain install: google-auth is not there (whether or not this machine has it)."""

    def find_spec(self, name, path=None, target=None):
        if name == "google.auth" or name.startswith("google.auth."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def test_a_missing_client_package_known_at_build_sends_nothing(tmp_path, monkeypatch):
    """Vertex AI without google.auth: the backend's build names the package and the pip line,
    and no item sends anything (before, each item retried ~40 s as a transient error)."""
    monkeypatch.setenv("VERTEXAI_PROJECT", "p")
    monkeypatch.setenv("VERTEXAI_LOCATION", "us-central1")
    monkeypatch.setattr(sys, "meta_path", [_NoGoogleAuth(), *sys.meta_path])
    for name in [m for m in sys.modules if m == "google.auth" or m.startswith("google.auth.")]:
        monkeypatch.delitem(sys.modules, name)
    client = _client(
        tmp_path, "litellm:vertex_ai/gemini-2.5-pro", concurrency=4, thinking={"budget": 128}
    )
    results = _ask(client, 40)
    assert not any(r.ok for r in results)
    assert sum(r.attempts for r in results) == 0
    assert all("pip install google-auth" in r.error for r in results)


def test_a_missing_client_package_met_at_call_time_stops_the_model(tmp_path, monkeypatch):
    """A package litellm imports only inside the call (one the build's table does not know):
    the breaker stops the model after stop_after attempts, not max_attempts (6) per item."""
    import litellm

    async def needs_a_package(**kwargs):
        raise ModuleNotFoundError("No module named 'some_sdk'", name="some_sdk")

    monkeypatch.setattr(litellm, "acompletion", needs_a_package)
    with FakeOpenAIServer() as server:
        client = _client(
            tmp_path,
            "litellm:openai/vlm",
            concurrency=4,
            api_base=server.url,
            transport="litellm",  # the package litellm imports inside its call
        )
        results = _ask(client, 40)
    assert not any(r.ok for r in results)
    assert client.breaker.reason == "missing client package some_sdk"
    assert sum(r.attempts for r in results) <= 5 + 4
    assert all("missing client package some_sdk" in r.error for r in results)
    assert sum(r.error.startswith("not sent") for r in results) >= 40 - 5 - 4
    assert all(r.cost == 0.0 for r in results)  # nothing left the process: $0, not unknown


def test_one_model_has_one_breaker_whichever_client_calls_it(tmp_path):
    """A describer and a judge on one endpoint whose options differ only in image limits are
    two clients of one model: once one trips the breaker, the other sends nothing more."""
    with FakeOpenAIServer(responder=lambda request: Reply(fault=Fault("401"))) as server:
        hub = ModelHub(CallCache(tmp_path / "cache"), stop_after=3)
        first = hub.text_client(
            "litellm:openai/vlm", ModelOptions(**FAST, api_base=server.url, concurrency=1)
        )
        second = hub.text_client(
            "litellm:openai/vlm",
            ModelOptions(**FAST, api_base=server.url, concurrency=1, max_image_pixels=65536),
        )
        assert first is not second and first.breaker is second.breaker
        _ask(first, 5)
        sent = server.stats.total
        results = _ask(second, 5)
    assert sent <= 3 + 1 and server.stats.total == sent
    assert all(r.error.startswith("not sent") for r in results)
    assert [b.reason for b in hub.stopped()] == ["401 unauthorized (the API key was refused)"]
