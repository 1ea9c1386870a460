"""The fake OpenAI server driven through titjudge's litellm backend: replies, faults, limits,
concurrency. The assertions are on what the server sends and what titjudge makes of it (the
Generation it reads, the error as it classifies it), never on litellm's own objects."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from doubles import server_app
from doubles.relies import installed
from doubles.server import ChatRequest, FakeOpenAIServer, Fault, Reply, TokenLogprob
from fake_server_support import (
    JUDGE_MESSAGE,
    JUDGE_SCORE_0_100,
    aattempt,
    attempt,
    backend,
    failure,
    generate,
    run,
)
from pydantic import BaseModel, Field

from titjudge.models.calls.structured import response_schema
from titjudge.models.core.base import GenerateRequest, Generation, PermanentError, TransientError
from titjudge.records.calls import TokenLogprobs

pytestmark = pytest.mark.doubles  # tests of the fake OpenAI server, not of titjudge


def record_server_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every `asyncio.sleep` the fake server's handlers ask for, in order (they still sleep):
    what the server waits, read without timing it."""
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float, *args: Any, **kwargs: Any) -> Any:
        slept.append(delay)
        return await real_sleep(delay, *args, **kwargs)

    monkeypatch.setattr(server_app, "asyncio", SimpleNamespace(sleep=sleep))
    return slept


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder="auto") as fake:
        yield fake


def test_plain_completion_round_trips_text_and_usage(server: FakeOpenAIServer) -> None:
    gen = generate(server.url, "hello there, fake model")
    assert gen.text == "hello there, fake model"
    assert gen.finish_reason == "stop"
    # completion: "hello", " there", ",", " fake", " model" = 5 tokens;
    # prompt: the same 5 + 4 per message + 3 primer = 12
    assert (gen.tokens_in, gen.tokens_out) == (12, 5)
    assert server.stats.by_status[200] == 1
    assert server.stats.by_endpoint["/v1/chat/completions"] == 1


def test_429_is_a_rate_limit_that_waits_its_retry_after(server: FakeOpenAIServer) -> None:
    server.script(Fault("429", retry_after=2.5))
    error = failure(server.url, "hi")
    assert isinstance(error, TransientError), f"{error!r} ({installed()})"
    assert error.rate_limited
    assert error.retry_after == 2.5, f"Retry-After: 2.5 read as {error.retry_after} ({installed()})"
    assert server.stats.by_fault["429"] == 1


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("500", TransientError),
        ("503", TransientError),
        ("400", PermanentError),
        ("401", PermanentError),
        ("context_length", PermanentError),
        ("malformed", TransientError),
    ],
)
def test_http_faults_are_classified_transient_or_permanent(
    server: FakeOpenAIServer, kind: str, expected: type[Exception]
) -> None:
    server.script(Fault(kind))
    error = failure(server.url, f"please fail with {kind}")
    assert isinstance(error, expected), f"{kind}: {error!r} ({installed()})"
    assert not getattr(error, "rate_limited", False)
    assert server.stats.by_fault[kind] == 1
    assert server.scripted_remaining == 0


def test_context_length_fault_is_named_and_carries_the_server_s_text(
    server: FakeOpenAIServer,
) -> None:
    server.script(Fault("context_length"))
    error = failure(server.url, "short")
    assert isinstance(error, PermanentError)
    assert str(error).startswith("context length exceeded: "), f"{error!r} ({installed()})"
    assert "maximum context length is 8192 tokens" in str(error)


def test_reset_drops_the_connection_and_the_call_is_transient(server: FakeOpenAIServer) -> None:
    server.script(Fault("reset"))
    error = failure(server.url, "reset me")
    assert isinstance(error, TransientError), f"{error!r} ({installed()})"
    assert not error.rate_limited and error.retry_after is None
    assert server.stats.by_status[0] == 1


def test_timeout_fault_is_transient_and_the_handler_is_cancelled(
    server: FakeOpenAIServer,
) -> None:
    server.script(Fault("timeout", delay=120.0))
    error = failure(server.url, "slow", timeout=0.5)  # returns long before the stall ends
    assert isinstance(error, TransientError), f"{error!r} ({installed()})"
    while server.stats.in_flight:  # the handler ends when it is cancelled (pytest's timeout)
        time.sleep(0.02)
    # 499 is recorded only for a handler cancelled before it answered: the client went away
    assert server.stats.by_status[499] == 1


def test_timeout_fault_answers_after_the_stall_when_the_client_waits(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept = record_server_sleeps(monkeypatch)
    server.script(Fault("timeout", delay=0.3))
    assert generate(server.url, "patient", timeout=5.0).text == "patient"
    assert [s for s in slept if s] == [0.3]  # the stall, then the answer
    assert server.stats.by_status[200] == 1 and server.stats.by_fault["timeout"] == 1


def test_response_schema_reaches_server_and_judge_fills_it() -> None:
    class Verdict(BaseModel):
        reason: str = Field(description="why the score")
        score: int = Field(ge=0, le=10)
        aligned: bool

    seen: list[ChatRequest] = []
    with FakeOpenAIServer(responder="judge") as fake:
        judge = fake.responder

        def spy(request: ChatRequest) -> Reply:
            seen.append(request)
            return judge(request)  # type: ignore[return-value]

        fake.responder = spy
        asked = GenerateRequest(
            JUDGE_MESSAGE, json_schema=response_schema(Verdict), schema_name="Verdict"
        )
        gen = generate(fake.url, asked)
    schema = seen[0].json_schema
    assert schema is not None and schema["properties"]["score"]["maximum"] == 10
    verdict = Verdict.model_validate_json(gen.text)
    assert verdict.score == 3  # Jaccard 1/3 scaled to 0..10
    assert verdict.aligned is False  # Jaccard < 0.5
    assert verdict.reason.startswith("The description shares 3 of 9 distinct content words")


def test_judge_without_schema_returns_reason_and_score(server: FakeOpenAIServer) -> None:
    data = json.loads(generate(server.url, JUDGE_MESSAGE).text)
    assert list(data) == ["reason", "score"]
    assert data["score"] == JUDGE_SCORE_0_100


def test_logprobs_round_trip_with_top_logprobs(server: FakeOpenAIServer) -> None:
    gen = generate(server.url, JUDGE_MESSAGE, top_logprobs=5)
    assert gen.logprobs is not None
    assert "".join(item.token for item in gen.logprobs) == gen.text
    score = next(item for item in gen.logprobs if item.token == " 33")
    assert score.logprob == pytest.approx(math.log(1 / 3))
    assert list(score.top) == [" 33", " 34", " 32", " 35", " 31"]
    probs = {token: math.exp(lp) for token, lp in score.top.items()}
    assert list(probs.values()) == pytest.approx([1 / 3, 1 / 6, 1 / 6, 1 / 12, 1 / 12])
    mean = sum(int(t) * p for t, p in probs.items()) / sum(probs.values())
    assert mean == pytest.approx(33.0)  # symmetric neighbours: the G-Eval mean is the score


def test_scripted_logprobs_are_returned_verbatim(server: FakeOpenAIServer) -> None:
    server.script(
        Reply(
            content="7",
            logprobs=(TokenLogprob("7", -0.5, (("7", -0.5), ("8", -1.2), ("6", -2.0))),),
        )
    )
    gen = generate(server.url, "score it", top_logprobs=2)
    assert gen.logprobs == [TokenLogprobs("7", -0.5, {"7": -0.5, "8": -1.2})]


def test_streaming_yields_the_same_text_and_usage(server: FakeOpenAIServer) -> None:
    """stream: true (which titjudge never sends; other clients of the double do) gives the
    plain answer's text and usage as chat.completion.chunk events, then [DONE]."""
    body = {"model": "test-model", "messages": [{"role": "user", "content": JUDGE_MESSAGE}]}
    url = server.url + "/chat/completions"
    plain = httpx.post(url, json=body, timeout=10).json()
    streamed = httpx.post(
        url, json={**body, "stream": True, "stream_options": {"include_usage": True}}, timeout=10
    )
    events = [line.removeprefix("data: ") for line in streamed.text.splitlines() if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    usage = [c["usage"] for c in chunks if c.get("usage")]
    assert text == plain["choices"][0]["message"]["content"]
    assert usage[-1]["completion_tokens"] == plain["usage"]["completion_tokens"]


def test_max_tokens_cuts_the_reply_with_finish_reason_length(server: FakeOpenAIServer) -> None:
    gen = generate(server.url, "one two three four five", max_tokens=3)
    assert (gen.text, gen.finish_reason) == ("one two three", "length")


def test_content_faults_corrupt_a_valid_200_reply(server: FakeOpenAIServer) -> None:
    server.script(
        Fault("fenced"),
        Fault("prose"),
        Fault("invalid_schema"),
        Fault("invalid_schema", variant="out_of_range"),
    )
    fenced, prose, missing, out_of_range = (
        generate(server.url, JUDGE_MESSAGE).text for _ in range(4)
    )
    assert fenced.startswith("Sure! Here is my assessment.\n\n```json\n")
    inner = fenced.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(inner)["score"] == JUDGE_SCORE_0_100
    assert "{" not in prose and not any(ch.isdigit() for ch in prose)
    assert list(json.loads(missing)) == ["reason"]  # no schema: 'score' is dropped
    assert json.loads(out_of_range)["score"] == 201  # max + (max - min) + 1
    assert server.stats.by_fault == {"fenced": 1, "prose": 1, "invalid_schema": 2}
    assert server.stats.by_status[200] == 4


def test_rpm_limit_answers_429_beyond_the_limit_then_recovers() -> None:
    with FakeOpenAIServer(rpm=5, rpm_window=1.0) as fake:
        outcomes: list[object] = []
        for index in range(8):
            outcome = attempt(fake.url, f"request {index}")
            if isinstance(outcome, Generation):
                outcomes.append("ok")
            else:
                assert isinstance(outcome, TransientError) and outcome.rate_limited, outcome
                outcomes.append(outcome.retry_after)
        assert outcomes == ["ok"] * 5 + [1.0] * 3
        assert fake.stats.by_fault["rpm"] == 3
        time.sleep(1.05)
        assert generate(fake.url, "after the window").text == "after the window"


@pytest.mark.slow
def test_128_concurrent_requests_overlap() -> None:
    """Requests held 0.2 s each are worked on together, not one after another: the server's
    own count of requests in flight at once (not the wall time, which load stretches)."""

    async def burst(url: str) -> list[str]:
        made = backend(url)
        calls = [made.generate(GenerateRequest(f"request number {i}")) for i in range(128)]
        return [gen.text for gen in await asyncio.gather(*calls)]

    with FakeOpenAIServer(latency=0.2) as fake:
        texts = run(burst(fake.url))
        assert texts == [f"request number {i}" for i in range(128)]
        assert fake.stats.max_in_flight >= 64
        assert fake.stats.max_concurrent_in_log() >= 64


def test_duplicates_count_repeated_bodies_and_attempts_reach_the_responder() -> None:
    attempts: list[int] = []

    def responder(request: ChatRequest) -> str:
        attempts.append(request.attempt)
        return "fine"

    with FakeOpenAIServer(responder=responder) as fake:
        fake.script(Fault("429"))
        failure(fake.url, "same body")
        generate(fake.url, "same body")
        assert (fake.stats.duplicates(), fake.stats.duplicates(ok_only=True)) == (1, 0)
        generate(fake.url, "same body")
        generate(fake.url, "another body")
        assert (fake.stats.duplicates(), fake.stats.duplicates(ok_only=True)) == (2, 1)
        assert attempts == [2, 3, 1]  # the faulted first arrival never reached the responder


@pytest.mark.slow
def test_rate_faults_are_deterministic_per_seed_and_body() -> None:
    def pattern(seed: int) -> list[str]:
        with FakeOpenAIServer(fault_rate=0.3, faults=("500", "503"), seed=seed) as fake:
            outcomes = [attempt(fake.url, f"item {index}") for index in range(20)]
            faults = [record.fault or "ok" for record in fake.stats.records]
        for outcome, fault in zip(outcomes, faults, strict=True):
            assert isinstance(outcome, Generation) is (fault == "ok")
            assert fault == "ok" or isinstance(outcome, TransientError), (fault, outcome)
        return faults

    first, again, other = pattern(7), pattern(7), pattern(8)
    assert first == again
    assert first != other
    assert 2 <= sum(o != "ok" for o in first) <= 12  # about 30% of 20
    assert {"500", "503"} <= set(first)


def test_responder_errors_and_exhausted_scripts_are_visible_500s() -> None:
    def broken(request: ChatRequest) -> str:
        raise RuntimeError("bug in responder")

    with FakeOpenAIServer(responder=broken) as fake:
        error = failure(fake.url, "x")
        assert isinstance(error, TransientError), f"{error!r} ({installed()})"
        assert "bug in responder" in str(error)
        assert fake.stats.by_fault["responder_error"] == 1


def test_context_window_and_api_key_checks() -> None:
    with FakeOpenAIServer(context_window=10, api_key="sk-right") as fake:
        error = failure(fake.url, "short", key="sk-wrong")
        assert isinstance(error, PermanentError), f"{error!r} ({installed()})"
        assert "Incorrect API key provided" in str(error)
        error = failure(fake.url, "this prompt has far more than ten tokens in it", key="sk-right")
        assert str(error).startswith("context length exceeded: "), f"{error!r} ({installed()})"
        assert "resulted in 17 tokens" in str(error)  # 10 words + 4 per message + 3 primer
        assert generate(fake.url, "tiny", key="sk-right").text == "tiny"


def test_scripted_reply_delay_is_slept_once(monkeypatch: pytest.MonkeyPatch) -> None:
    slept = record_server_sleeps(monkeypatch)
    with FakeOpenAIServer() as fake:
        fake.script(Reply(content="late", delay=0.3))
        assert generate(fake.url, "x").text == "late"
    assert [s for s in slept if s] == [0.3]  # once, not again when the reply is written


def test_stop_cancels_stalled_requests_promptly() -> None:
    """The client would wait out the stall (its timeout is longer): only a stop that cancels
    the stalled handler ends the call with a failure, and 499 (a handler cancelled before it
    answered); a stop that waited for it would end in the stalled answer. `stop()` gives up
    on the server's thread after 30 s: the thread has ended when it returns."""
    fake = FakeOpenAIServer()
    fake.start()
    thread = fake._thread
    fake.script(Fault("timeout", delay=200.0))

    async def stalled_then_stop() -> Generation | BaseException:
        call = asyncio.ensure_future(aattempt(fake.url, "stalled", timeout=400.0))
        while fake.stats.in_flight == 0:
            await asyncio.sleep(0.01)
        await asyncio.get_running_loop().run_in_executor(None, fake.stop)
        return await call  # the connection is closed under the client

    outcome = run(stalled_then_stop())
    assert thread is not None and not thread.is_alive()
    assert isinstance(outcome, TransientError), f"{outcome!r} ({installed()})"
    assert not outcome.rate_limited
    assert fake.stats.in_flight == 0 and fake.stats.by_status[499] == 1
