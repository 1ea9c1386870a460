"""The provider stand-in itself (provider_server.py), over plain HTTP: its queues and defaults,
the Gemini request checks it makes as the real API does, and its streamed answers.

What titjudge makes of each provider shape is in test_provider_gemini.py and
test_provider_openai.py; these tests only make sure the double answers as documented.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_server import ProviderServer, Reply, gemini_ok, openai_ok

pytestmark = (
    pytest.mark.doubles
)  # tests of the provider stand-in (provider_server.py), not of titjudge


PRO = "gemini-2.5-pro"


def chat(server: ProviderServer, model: str, **body: Any) -> httpx.Response:
    payload = {"model": model, "messages": [{"role": "user", "content": "hi"}], **body}
    return httpx.post(server.openai_base + "/chat/completions", json=payload, timeout=10)


def said(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


def gemini(
    server: ProviderServer,
    model: str = PRO,
    *,
    contents: list[dict[str, Any]] | None = None,
    **config: Any,
) -> httpx.Response:
    """A generateContent request shaped as the Gemini API reference documents it."""
    body: dict[str, Any] = {
        "contents": contents or [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {"thinkingConfig": {"thinkingBudget": 128}, **config},
    }
    return httpx.post(
        f"{server.gemini_base}/models/{model}:generateContent",
        json=body,
        headers={"x-goog-api-key": "k"},
        timeout=10,
    )


def google_error(response: httpx.Response) -> tuple[int, str, str]:
    error = response.json()["error"]
    return response.status_code, error["status"], error["message"]


@pytest.mark.slow
def test_queue_order_wildcard_and_default(provider_server: ProviderServer) -> None:
    provider_server.enqueue("*", openai_ok("from wildcard"))
    provider_server.enqueue(
        "m1", openai_ok("first"), lambda req: openai_ok(f"saw {req.body['model']}")
    )
    assert provider_server.pending() == 3
    answers = [said(chat(provider_server, "m1")) for _ in range(4)]
    assert answers == ["first", "saw m1", "from wildcard", "ok"]
    assert provider_server.pending() == 0
    assert [r.model for r in provider_server.requests_for("chat")] == ["m1"] * 4


def test_custom_default(provider_server: ProviderServer) -> None:
    original = provider_server.default_chat
    provider_server.default_chat = lambda body: {
        **openai_ok(json.dumps({"n": len(body["messages"])})).body
    }
    try:
        response = chat(provider_server, "any")
    finally:
        provider_server.default_chat = original
    assert json.loads(said(response)) == {"n": 1}


@pytest.mark.slow
def test_gemini_checks_reject_what_the_api_rejects(provider_server: ProviderServer) -> None:
    """A zero budget on 2.5 Pro, an empty text part and keys beside $ref in the response
    schema are 400 INVALID_ARGUMENT, as the builders' sources quote them."""
    zero = gemini(provider_server, thinkingConfig={"thinkingBudget": 0})
    assert google_error(zero) == (
        400,
        "INVALID_ARGUMENT",
        "Budget 0 is invalid. This model only works in thinking mode.",
    )
    assert gemini(
        provider_server, "gemini-2.5-flash", thinkingConfig={"thinkingBudget": 0}
    ).is_success

    turns = [
        {"role": "user", "parts": [{"text": "a"}]},
        {"role": "model", "parts": [{"text": ""}]},
        {"role": "user", "parts": [{"text": "b"}]},
    ]
    status, kind, message = google_error(gemini(provider_server, contents=turns))
    assert (status, kind) == (400, "INVALID_ARGUMENT")
    assert "contents[1].parts[0].data: required oneof field 'data'" in message

    described = {"$ref": "#/$defs/Inner", "description": "the verdict"}
    schema = {"type": "object", "properties": {"verdict": described}, "$defs": {"Inner": {}}}
    status, kind, message = google_error(gemini(provider_server, response_json_schema=schema))
    assert (status, kind) == (400, "INVALID_ARGUMENT")
    assert message == (
        "schema at properties.verdict can only contain properties starting with '$' when "
        "$ref is present"
    )


def test_validation_does_not_consume_queue(provider_server: ProviderServer) -> None:
    provider_server.enqueue(PRO, gemini_ok("kept"))
    assert gemini(provider_server, thinkingConfig={"thinkingBudget": 0}).status_code == 400
    assert provider_server.pending(PRO) == 1
    answer = gemini(provider_server).json()
    assert answer["candidates"][0]["content"]["parts"] == [{"text": "kept"}]


def test_streamed_chat_answer(provider_server: ProviderServer) -> None:
    """stream: true -> chat.completion.chunk events (the content, the finish reason, the
    usage when stream_options.include_usage asks), then data: [DONE]."""
    provider_server.enqueue("gpt-4o", openai_ok("streamed words", prompt_tokens=5))
    response = chat(provider_server, "gpt-4o", stream=True, stream_options={"include_usage": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in response.text.splitlines() if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "streamed words"
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]] == [None, "stop"]
    assert chunks[-1]["usage"]["prompt_tokens"] == 5


def test_unknown_route_and_raw_reply(provider_server: ProviderServer) -> None:
    response = httpx.get(provider_server.url + "/nope")
    assert response.status_code == 404
    assert provider_server.last.kind == "other"
    provider_server.enqueue(
        "m", Reply(status=502, body="<html>bad gateway</html>", headers={"x-a": "1"})
    )
    response = httpx.post(
        provider_server.openai_base + "/chat/completions", json={"model": "m", "messages": []}
    )
    assert (response.status_code, response.text, response.headers["x-a"]) == (
        502,
        "<html>bad gateway</html>",
        "1",
    )
