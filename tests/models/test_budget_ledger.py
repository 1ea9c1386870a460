"""The budget ledger in the call layer (`models.calls.budget`): every attempt reserves its worst
case and settles to its reply's cost (the worst case when unknown, $0 when refused before any
token), a retry the budget cannot cover is not sent, and calls in flight never hold more than
the budget, against the loopback server."""

from __future__ import annotations

import asyncio

import pytest
from doubles.server import FakeOpenAIServer, Fault, Reply

from titjudge.cache.store import CallCache
from titjudge.models.calls.budget import Budget
from titjudge.models.calls.token_estimate import request_tokens
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.spec import parse_model_spec

RATE = 10.0  # $ per 1M tokens
FAST = {"backoff_initial": 0.01, "backoff_max": 0.05}
REQUEST = GenerateRequest(prompt="describe the image in detail", max_tokens=100)
#: one attempt's worst case: the input estimate plus max_tokens, at RATE
WORST = (request_tokens(REQUEST, parse_model_spec("litellm:openai/vlm"), 0) + 100) * RATE / 1e6


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _client(tmp_path, budget: Budget, url: str, **options):
    hub = ModelHub(CallCache(tmp_path / "cache"), budget=budget)
    price = {"input": RATE, "output": RATE}
    return hub.text_client(
        "litellm:openai/vlm", ModelOptions(**{**FAST, "api_base": url, "price": price, **options})
    )


def _scripted(replies):
    found = iter(replies)
    return lambda request: next(found)


def test_each_attempt_reserves_and_settles_to_what_it_cost(tmp_path):
    # a 500 is refused before any token ($0); a timeout's cost is unknown (its worst case)
    replies = [Reply(fault=Fault("500")), Reply(fault=Fault("timeout")), Reply(content="a cat")]
    with FakeOpenAIServer(responder=_scripted(replies), timeout_delay=3.0) as server:
        budget = Budget(1.0)
        client = _client(tmp_path, budget, server.url, max_attempts=3, timeout=1.0)
        result = asyncio.run(client.text(REQUEST, role="describer", probe=SEND))
        assert server.stats.total == 3, (result, server.stats.by_status)
    assert result.ok and result.attempts == 3 and result.cost > 0
    assert budget.spent == pytest.approx(WORST + result.cost)
    assert budget.reserved == 0 and budget.holding == 0 and not budget.stopped


def test_a_retry_the_budget_cannot_cover_is_not_sent(tmp_path):
    replies = [Reply(fault=Fault("timeout")), Reply(content="a cat")]
    with FakeOpenAIServer(responder=_scripted(replies), timeout_delay=3.0) as server:
        budget = Budget(WORST * 1.5)  # covers the first attempt's worst case, not a second
        client = _client(tmp_path, budget, server.url, max_attempts=3, timeout=1.0)
        result = asyncio.run(client.text(REQUEST, role="describer", probe=SEND))
        assert server.stats.total == 1
    assert not result.ok and result.attempts == 1
    assert result.error.startswith("not sent: budget")
    assert "after 1 attempts; the last: no reply within 1 s" in result.error
    assert budget.stopped and budget.refused == 1
    assert budget.spent == pytest.approx(WORST)  # the timed-out attempt, at its worst case


@pytest.mark.slow
def test_calls_in_flight_never_hold_more_than_the_budget(tmp_path):
    with FakeOpenAIServer(responder="auto", latency=0.1) as server:
        budget = Budget(WORST * 3.5)  # three worst cases at a time
        client = _client(tmp_path, budget, server.url, concurrency=16)

        async def many():
            requests = [GenerateRequest(prompt=f"item {i}", max_tokens=100) for i in range(12)]
            return await asyncio.gather(
                *(client.text(r, role="describer", probe=SEND) for r in requests)
            )

        results = asyncio.run(many())
        assert client.limiter.peak_in_flight <= 3
    sent = [r for r in results if r.error is None or not r.error.startswith("not sent")]
    assert budget.peak <= budget.usd
    assert budget.spent == pytest.approx(sum(r.cost for r in sent))
    # answers settle below their worst case, so more calls than three are answered
    assert len(sent) > 3 and server.stats.total == len(sent)
    refused = [r for r in results if r not in sent]
    assert all(r.attempts == 0 and r.cost == 0 for r in refused)
    assert budget.refused == len(refused)
