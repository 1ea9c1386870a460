"""A `batch: true` Anthropic model's lines are the online calls: each line's `params` is the very
body the online call POSTs to /v1/messages, and a batch result's message is read into the same
Generation as the online reply carrying that message (text, thinking, refusal, max_tokens,
structured output from litellm's JSON tool, usage with prompt-cache reads), only at the batch
price. Online side: the provider stand-in (provider_server.py, Anthropic's Messages shapes in
provider_families.py)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from typing import Any

import pytest
from provider_calls import KEY
from provider_server import Reply

from titjudge.models.core.base import GenerateRequest
from titjudge.records.image_input import ImageInput

SCHEMA = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string"},
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["rationale", "score"],
    "additionalProperties": False,
}
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _message(content: list[dict[str, Any]], stop: str = "end_turn", model: str = "m") -> dict:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 40,
            "output_tokens": 12,
            "cache_read_input_tokens": 25,
            "cache_creation_input_tokens": 5,
        },
    }


def _backend(layer, provider_server, model: str, **options: Any):
    return layer.backend(model, api_base=provider_server.anthropic_base, **options)


@pytest.mark.parametrize(
    ("model", "options", "request_"),
    [
        (
            "anthropic/claude-sonnet-4-5",
            {},
            GenerateRequest(
                prompt="Describe it.",
                system="You describe images.",
                images=(ImageInput(PNG, "image/png"),),
            ),
        ),
        ("anthropic/claude-haiku-4-5", {}, GenerateRequest(prompt="Judge.", json_schema=SCHEMA)),
        ("anthropic/judge", {}, GenerateRequest(prompt="Judge.", json_schema=SCHEMA)),
        (
            "anthropic/claude-sonnet-4-5",
            {"thinking": "low"},
            GenerateRequest(prompt="Judge.", json_schema=SCHEMA, temperature=None),
        ),
    ],
    ids=["image", "native-schema", "json-tool", "thinking"],
)
@pytest.mark.slow
def test_a_lines_params_are_the_body_the_online_call_posts(
    layer, provider_server, model, options, request_
):
    backend = _backend(layer, provider_server, model, **options)
    provider_server.enqueue("*", Reply(body=_message([{"type": "text", "text": "{}"}])))
    asyncio.run(backend.generate(request_))
    posted = provider_server.last
    assert posted.path == "/v1/messages" and posted.header("x-api-key") == KEY
    body = backend.batch_api().body(request_)
    assert body == posted.body
    line = backend.batch_api().line("tj-abc", body)
    assert line == {"custom_id": "tj-abc", "params": posted.body}


#: (model, schema, message): what the batch must read as the online call reads it
REPLIES = {
    "text": ("anthropic/claude-sonnet-4-5", None, _message([{"type": "text", "text": "A café."}])),
    "thinking": (
        "anthropic/claude-sonnet-4-5",
        None,
        _message(
            [
                {"type": "thinking", "thinking": "Count the cups.", "signature": "EqQBCgIY"},
                {"type": "text", "text": "Two cups."},
            ]
        ),
    ),
    "max_tokens": (
        "anthropic/claude-sonnet-4-5",
        None,
        _message([{"type": "text", "text": "A caf"}], "max_tokens"),
    ),
    "refusal": (
        "anthropic/claude-sonnet-4-5",
        None,
        _message([{"type": "text", "text": "I can't help with that."}], "refusal"),
    ),
    "native-schema": (
        "anthropic/claude-haiku-4-5",
        SCHEMA,
        _message([{"type": "text", "text": '{"rationale": "café", "score": 7}'}]),
    ),
    "json-tool": (
        "anthropic/judge",
        SCHEMA,
        _message(
            [
                {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "json_tool_call",
                    "input": {"rationale": "café", "score": 7},
                }
            ],
            "tool_use",
        ),
    ),
}


@pytest.mark.parametrize("case", list(REPLIES))
def test_a_succeeded_line_reads_as_the_online_reply(layer, provider_server, case):
    model, schema, message = REPLIES[case]
    backend = _backend(layer, provider_server, model)
    request_ = GenerateRequest(prompt="Judge.", json_schema=schema)
    provider_server.enqueue("*", Reply(body=message))
    online = asyncio.run(backend.generate(request_))
    api = backend.batch_api()
    api.body(request_)  # as a batch run builds every body first
    parsed = api.parse({"custom_id": "tj-1", "result": {"type": "succeeded", "message": message}})
    assert parsed.error is None and parsed.generation is not None and not parsed.unfinished
    batch = parsed.generation
    skip = {"cost", "max_tokens_sent"}  # the price differs; the collector sets the cap sent
    fields = [f.name for f in dataclasses.fields(batch) if f.name not in skip]
    assert {f: getattr(batch, f) for f in fields} == {f: getattr(online, f) for f in fields}
    # what both say, pinned: cache reads are prompt tokens served from the prompt cache
    assert batch.tokens_in == 40 + 25 + 5 and batch.cached_tokens == 25
    assert batch.finish_reason == {"max_tokens": "length", "refusal": "content_filter"}.get(
        case, "stop"
    )
    if schema is not None:
        assert json.loads(batch.text) == {"rationale": "café", "score": 7}
    if case == "thinking":
        assert batch.reasoning == "Count the cups." and batch.text == "Two cups."
    if model == "anthropic/judge":  # litellm does not price it: unknown, never 0
        assert batch.cost is None
    else:  # litellm's batch rates for the model: half of what the online reply cost
        assert batch.cost == pytest.approx(online.cost / 2, rel=1e-9)
