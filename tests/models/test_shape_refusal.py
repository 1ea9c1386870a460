"""A server refusing the request's shape is not retried and stops the model: against a
loopback stand-in for llama-cpp-python's server (tests/doubles/llama_cpp_server.py, which
cites the server's code and the public report of its 500 on a `json_schema` response_format),
a judge call whose `structured_output` is set to a dialect the server refuses is sent once and
fails naming the refusal and the setting to change, and many calls make at most the breaker's
threshold plus the concurrency in requests, all failing for that one reason. (Left to `auto`,
the default at an api_base, the dialect is learnt instead: tests/models/test_dialects.py.)"""

from __future__ import annotations

import asyncio

from doubles.llama_cpp_server import REFUSAL, LlamaCppServer

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.calls.breaker import NOT_SENT
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.models.litellm.errors.verdicts import refused_shape

REFUSED = "the server refuses the request's shape (HTTP 500"


def judge_calls(server: LlamaCppServer, tmp_path, n: int, concurrency: int, stop_after: int):
    async def go():
        hub = ModelHub(
            CallCache(tmp_path / "cache"), default_concurrency=concurrency, stop_after=stop_after
        )
        options = ModelOptions(
            api_base=server.url,
            backoff_initial=0.0,
            backoff_max=0.0,
            structured_output="json_schema",  # chosen: not learnt (tests/models/test_dialects.py)
        )
        client = hub.text_client("litellm:openai/smollm2", options)
        try:
            requests = [GenerateRequest(prompt=f"PROMPT:\nitem {i}") for i in range(n)]
            return await asyncio.gather(
                *(client.structured(r, JudgeVerdict, role="judge", probe=SEND) for r in requests)
            )
        finally:
            await hub.aclose()

    return asyncio.run(go())


def test_a_500_with_a_validation_body_is_sent_once_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")
    with LlamaCppServer() as server:
        (result,) = judge_calls(server, tmp_path, 1, concurrency=1, stop_after=5)
    assert not result.ok and result.attempts == 1
    assert result.error is not None and result.error.startswith(REFUSED)
    assert "Input should be 'text' or 'json_object'" in result.error  # the server's own words
    assert "structured_output" in result.error  # the setting that would change it
    assert len(server.requests) == 1
    assert server.requests[0]["response_format"]["type"] == "json_schema"


def test_a_server_refusing_every_request_stops_the_model_after_the_threshold(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")
    with LlamaCppServer() as server:
        results = judge_calls(server, tmp_path, 60, concurrency=4, stop_after=5)
    assert len(server.requests) <= 5 + 4  # the threshold, plus the calls already in flight
    assert not any(r.ok for r in results)
    sent = [r for r in results if r.error is not None and r.error.startswith(REFUSED)]
    unsent = [r for r in results if r.error is not None and r.error.startswith(NOT_SENT)]
    assert len(sent) == len(server.requests) and len(sent) + len(unsent) == 60
    assert all(REFUSED in (r.error or "") for r in unsent)  # stopped for that one reason


class ServerError(Exception):
    def __init__(self, status: int):
        super().__init__("server error")
        self.status_code = status


def test_each_documented_refusal_text_is_a_shape_refusal_and_an_ordinary_500_is_not():
    # llama-cpp-python under FastAPI >= 0.124 (ValidationException.__str__), and llama-server
    # builds that threw std::runtime_error for a response_format they do not take (both quoted
    # in docs/research/server-dialects.md)
    newer = (
        "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
        "'type'), 'msg': \"Input should be 'text' or 'json_object'\"}\n"
    )
    server = 'response_format type must be one of "text" or "json_object", but got: json_schema'
    ordinary = "The server had an error processing your request. Sorry about that!"
    for body in (REFUSAL, newer, server):
        assert (refused_shape(ServerError(500), body) or "").startswith(REFUSED), body
    assert refused_shape(ServerError(500), ordinary) is None  # retried as transient
    assert refused_shape(ServerError(400), REFUSAL) is None  # a 4xx is permanent already


def test_under_auto_a_server_refusing_every_request_still_stops_after_the_threshold(
    tmp_path, monkeypatch
):
    """A 500 whose validation error is not about the response format (here: the messages) is
    not a dialect to learn: under `auto` (the default at an api_base) it is the shape refusal
    above, and 200 calls make at most the threshold plus the concurrency in requests."""
    from doubles.server import FakeOpenAIServer, Fault, Reply

    message = (
        "[{'type': 'literal_error', 'loc': ('body', 'messages', 0, 'role'), 'msg': \"Input "
        "should be 'system', 'user' or 'assistant'\", 'input': 'developer'}]"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")

    async def go(url):
        hub = ModelHub(CallCache(tmp_path / "cache"), default_concurrency=4, stop_after=5)
        client = hub.text_client(
            "litellm:openai/judge", ModelOptions(api_base=url, backoff_initial=0)
        )
        try:
            requests = [GenerateRequest(prompt=f"PROMPT:\nitem {i}") for i in range(200)]
            return await asyncio.gather(
                *(client.structured(r, JudgeVerdict, role="judge", probe=SEND) for r in requests)
            )
        finally:
            await hub.aclose()

    with FakeOpenAIServer(responder=lambda _: Reply(fault=Fault("500", message=message))) as server:
        results = asyncio.run(go(server.url))
        sent = server.stats.by_endpoint["/v1/chat/completions"]
    assert sent <= 5 + 4
    assert not any(r.ok for r in results)
    assert all(REFUSED in (r.error or "") for r in results)  # one grouped reason
