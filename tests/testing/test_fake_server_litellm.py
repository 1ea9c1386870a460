"""The fake OpenAI server driven through litellm: replies, faults, limits, concurrency."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Iterator

import openai
import pytest
from doubles.server import ChatRequest, FakeOpenAIServer, Fault, Reply, TokenLogprob
from fake_server_support import (
    JUDGE_MESSAGE,
    JUDGE_SCORE_0_100,
    acomplete,
    complete,
    failure,
    litellm,
    response_headers,
    run,
)
from pydantic import BaseModel, Field


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder="auto") as fake:
        yield fake


def test_plain_completion_round_trips_text_and_usage(server: FakeOpenAIServer) -> None:
    response = complete(server.url, "hello there, fake model")
    assert response.choices[0].message.content == "hello there, fake model"
    assert response.choices[0].finish_reason == "stop"
    # completion: "hello", " there", ",", " fake", " model" = 5 tokens;
    # prompt: the same 5 + 4 per message + 3 primer = 12
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (12, 5)
    assert response.usage.total_tokens == 17
    assert server.stats.by_status[200] == 1
    assert server.stats.by_endpoint["/v1/chat/completions"] == 1


def test_429_is_rate_limit_error_with_retry_after_in_litellm_response_headers(
    server: FakeOpenAIServer,
) -> None:
    server.script(Fault("429", retry_after=2.5))
    exc = failure(server.url, "hi")
    assert isinstance(exc, litellm.RateLimitError)
    assert exc.status_code == 429
    # litellm keeps the provider's headers here; exc.response is a synthetic httpx.Response
    assert response_headers(exc)["retry-after"] == "2.5"
    assert response_headers(exc)["retry-after-ms"] == "2500"
    assert "retry-after" not in exc.response.headers
    assert server.stats.by_fault["429"] == 1


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("500", litellm.InternalServerError),
        ("503", litellm.ServiceUnavailableError),
        ("400", litellm.BadRequestError),
        ("401", litellm.AuthenticationError),
        ("context_length", litellm.ContextWindowExceededError),
        ("malformed", litellm.InternalServerError),
    ],
)
def test_http_faults_map_to_litellm_exceptions(
    server: FakeOpenAIServer, kind: str, expected: type[Exception]
) -> None:
    server.script(Fault(kind))
    exc = failure(server.url, f"please fail with {kind}")
    assert type(exc) is expected
    assert server.stats.by_fault[kind] == 1
    assert server.scripted_remaining == 0


def test_context_length_fault_carries_openai_code_and_is_a_bad_request(
    server: FakeOpenAIServer,
) -> None:
    server.script(Fault("context_length"))
    exc = failure(server.url, "short")
    assert isinstance(exc, litellm.BadRequestError)  # ContextWindowExceededError subclasses it
    assert "maximum context length is 8192 tokens" in str(exc)


def test_reset_drops_the_connection_and_litellm_raises_internal_server_error(
    server: FakeOpenAIServer,
) -> None:
    server.script(Fault("reset"))
    exc = failure(server.url, "reset me")
    # litellm wraps the openai APIConnectionError in an OpenAIError(status 500)
    assert type(exc) is litellm.InternalServerError
    assert "Connection error" in str(exc)
    chain, cause = [], exc.__cause__ or exc.__context__
    while cause is not None:
        chain.append(type(cause))
        cause = cause.__cause__ or cause.__context__
    assert openai.APIConnectionError in chain
    assert ConnectionResetError in chain
    assert server.stats.by_status[0] == 1


def test_timeout_fault_raises_litellm_timeout_and_the_handler_is_cancelled(
    server: FakeOpenAIServer,
) -> None:
    server.script(Fault("timeout", delay=5.0))
    started = time.perf_counter()
    exc = failure(server.url, "slow", timeout=0.5)
    assert type(exc) is litellm.Timeout
    assert time.perf_counter() - started < 3.0
    deadline = time.monotonic() + 3.0
    while server.stats.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.stats.in_flight == 0
    assert server.stats.by_status[499] == 1  # client went away before the answer


def test_timeout_fault_answers_after_the_stall_when_the_client_waits(
    server: FakeOpenAIServer,
) -> None:
    server.script(Fault("timeout", delay=0.3))
    started = time.perf_counter()
    response = complete(server.url, "patient", timeout=5.0)
    assert response.choices[0].message.content == "patient"
    assert time.perf_counter() - started >= 0.3


def test_pydantic_response_format_reaches_server_and_judge_fills_the_schema() -> None:
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
        response = complete(fake.url, JUDGE_MESSAGE, response_format=Verdict)
    schema = seen[0].json_schema
    assert schema is not None and schema["properties"]["score"]["maximum"] == 10
    verdict = Verdict.model_validate_json(response.choices[0].message.content)
    assert verdict.score == 3  # Jaccard 1/3 scaled to 0..10
    assert verdict.aligned is False  # Jaccard < 0.5
    assert verdict.reason.startswith("The description shares 3 of 9 distinct content words")


def test_judge_without_schema_returns_reason_and_score(server: FakeOpenAIServer) -> None:
    data = json.loads(complete(server.url, JUDGE_MESSAGE).choices[0].message.content)
    assert list(data) == ["reason", "score"]
    assert data["score"] == JUDGE_SCORE_0_100


def test_logprobs_round_trip_with_top_logprobs(server: FakeOpenAIServer) -> None:
    response = complete(server.url, JUDGE_MESSAGE, logprobs=True, top_logprobs=5)
    content = response.choices[0].logprobs.content
    text = response.choices[0].message.content
    assert "".join(item.token for item in content) == text
    score = next(item for item in content if item.token == " 33")
    assert score.logprob == pytest.approx(math.log(1 / 3))
    tops = [(t.token, t.logprob) for t in score.top_logprobs]
    assert [t for t, _ in tops] == [" 33", " 34", " 32", " 35", " 31"]
    probs = [math.exp(lp) for _, lp in tops]
    assert probs == pytest.approx([1 / 3, 1 / 6, 1 / 6, 1 / 12, 1 / 12])
    mean = sum(int(t) * p for (t, _), p in zip(tops, probs, strict=True)) / sum(probs)
    assert mean == pytest.approx(33.0)  # symmetric neighbours: the G-Eval mean is the score


def test_scripted_logprobs_are_returned_verbatim(server: FakeOpenAIServer) -> None:
    server.script(
        Reply(
            content="7",
            logprobs=(TokenLogprob("7", -0.5, (("7", -0.5), ("8", -1.2), ("6", -2.0))),),
        )
    )
    response = complete(server.url, "score it", logprobs=True, top_logprobs=2)
    item = response.choices[0].logprobs.content[0]
    assert (item.token, item.logprob) == ("7", -0.5)
    assert [(t.token, t.logprob) for t in item.top_logprobs] == [("7", -0.5), ("8", -1.2)]


def test_streaming_yields_the_same_text_and_usage(server: FakeOpenAIServer) -> None:
    async def collect() -> tuple[str, int]:
        stream = await acomplete(
            server.url, JUDGE_MESSAGE, stream=True, stream_options={"include_usage": True}
        )
        text, completion_tokens = "", -1
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
            if getattr(chunk, "usage", None):
                completion_tokens = chunk.usage.completion_tokens
        return text, completion_tokens

    text, tokens = run(collect())
    plain = complete(server.url, JUDGE_MESSAGE)
    assert text == plain.choices[0].message.content
    assert tokens == plain.usage.completion_tokens


def test_max_tokens_cuts_the_reply_with_finish_reason_length(server: FakeOpenAIServer) -> None:
    response = complete(server.url, "one two three four five", max_tokens=3)
    assert response.choices[0].message.content == "one two three"
    assert response.choices[0].finish_reason == "length"


def test_content_faults_corrupt_a_valid_200_reply(server: FakeOpenAIServer) -> None:
    server.script(
        Fault("fenced"),
        Fault("prose"),
        Fault("invalid_schema"),
        Fault("invalid_schema", variant="out_of_range"),
    )
    fenced, prose, missing, out_of_range = (
        complete(server.url, JUDGE_MESSAGE).choices[0].message.content for _ in range(4)
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
        outcomes = []
        for index in range(8):
            try:
                complete(fake.url, f"request {index}")
                outcomes.append("ok")
            except litellm.RateLimitError as exc:
                outcomes.append(response_headers(exc)["retry-after"])
        assert outcomes == ["ok"] * 5 + ["1"] * 3
        assert fake.stats.by_fault["rpm"] == 3
        time.sleep(1.05)
        assert complete(fake.url, "after the window").choices[0].message.content == (
            "after the window"
        )


def test_128_concurrent_requests_overlap() -> None:
    async def burst(url: str) -> list[str]:
        calls = [acomplete(url, f"request number {i}") for i in range(128)]
        return [r.choices[0].message.content for r in await asyncio.gather(*calls)]

    with FakeOpenAIServer(latency=0.2) as fake:
        run(burst(fake.url))  # warm up litellm's clients
        fake.reset_stats()
        started = time.perf_counter()
        texts = run(burst(fake.url))
        elapsed = time.perf_counter() - started
        assert texts == [f"request number {i}" for i in range(128)]
        assert fake.stats.max_in_flight >= 64
        assert fake.stats.max_concurrent_in_log() >= 64
        assert elapsed < 0.2 * 128 / 4  # far from serial (25.6 s)


def test_duplicates_count_repeated_bodies_and_attempts_reach_the_responder() -> None:
    attempts: list[int] = []

    def responder(request: ChatRequest) -> str:
        attempts.append(request.attempt)
        return "fine"

    with FakeOpenAIServer(responder=responder) as fake:
        fake.script(Fault("429"))
        failure(fake.url, "same body")
        complete(fake.url, "same body")
        assert (fake.stats.duplicates(), fake.stats.duplicates(ok_only=True)) == (1, 0)
        complete(fake.url, "same body")
        complete(fake.url, "another body")
        assert (fake.stats.duplicates(), fake.stats.duplicates(ok_only=True)) == (2, 1)
        assert attempts == [2, 3, 1]  # the faulted first arrival never reached the responder


def test_rate_faults_are_deterministic_per_seed_and_body() -> None:
    def pattern(seed: int) -> list[str]:
        with FakeOpenAIServer(fault_rate=0.3, faults=("500", "503"), seed=seed) as fake:
            out = []
            for index in range(40):
                try:
                    complete(fake.url, f"item {index}")
                    out.append("ok")
                except litellm.InternalServerError:
                    out.append("500")
                except litellm.ServiceUnavailableError:
                    out.append("503")
            return out

    first, again, other = pattern(7), pattern(7), pattern(8)
    assert first == again
    assert first != other
    assert 4 <= sum(o != "ok" for o in first) <= 24  # about 30% of 40
    assert {"500", "503"} <= set(first)


def test_responder_errors_and_exhausted_scripts_are_visible_500s() -> None:
    def broken(request: ChatRequest) -> str:
        raise RuntimeError("bug in responder")

    with FakeOpenAIServer(responder=broken) as fake:
        exc = failure(fake.url, "x")
        assert isinstance(exc, litellm.InternalServerError)
        assert "bug in responder" in str(exc)
        assert fake.stats.by_fault["responder_error"] == 1


def test_context_window_and_api_key_checks() -> None:
    with FakeOpenAIServer(context_window=10, api_key="sk-right") as fake:
        exc = failure(fake.url, "short", api_key="sk-wrong")
        assert type(exc) is litellm.AuthenticationError
        exc = failure(
            fake.url, "this prompt has far more than ten tokens in it", api_key="sk-right"
        )
        assert type(exc) is litellm.ContextWindowExceededError
        assert "resulted in 17 tokens" in str(exc)  # 10 words + 4 per message + 3 primer
        ok = complete(fake.url, "tiny", api_key="sk-right")
        assert ok.choices[0].message.content == "tiny"


def test_scripted_reply_delay_is_slept_once() -> None:
    with FakeOpenAIServer() as fake:
        complete(fake.url, "warm up litellm")
        fake.script(Reply(content="late", delay=0.3))
        started = time.perf_counter()
        assert complete(fake.url, "x").choices[0].message.content == "late"
        assert 0.3 <= time.perf_counter() - started < 0.55


def test_stop_cancels_stalled_requests_promptly() -> None:
    fake = FakeOpenAIServer()
    fake.start()
    fake.script(Fault("timeout", delay=60.0))

    async def stalled_then_stop() -> tuple[BaseException | None, float]:
        call = asyncio.ensure_future(acomplete(fake.url, "stalled", timeout=30.0))
        while fake.stats.in_flight == 0:
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        await asyncio.get_running_loop().run_in_executor(None, fake.stop)
        stopped = time.perf_counter() - started
        try:
            await call
        except Exception as exc:  # the connection is closed under the client
            return exc, stopped
        return None, stopped

    exc, stopped = run(stalled_then_stop())
    assert stopped < 3.0
    assert type(exc) is litellm.InternalServerError and "Connection error" in str(exc)
    assert fake.stats.in_flight == 0 and fake.stats.by_status[499] == 1
