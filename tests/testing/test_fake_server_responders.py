"""Responders, request parsing, content faults and text helpers of the fake server (no HTTP)."""

from __future__ import annotations

import base64
import hashlib
import json
import math
from pathlib import Path

import pytest
from doubles.server import FakeOpenAIServer
from doubles.server_request import (
    BadRequest,
    ChatRequest,
    Fault,
    Reply,
    apply_content_fault,
)
from doubles.server_scripts import (
    AutoResponder,
    DescribeResponder,
    JudgeResponder,
    ScriptedResponder,
    build_responder,
    load_descriptions,
    load_script,
)
from doubles.server_stats import SlidingWindowLimiter
from doubles.server_text import (
    content_words,
    describe_from_hash,
    fill_schema,
    hashed_embedding,
    jaccard,
)
from doubles.server_wire import default_logprobs, tokenize

from titjudge.errors import ConfigError, DataError

pytestmark = pytest.mark.doubles  # tests of the fake OpenAI server, not of titjudge


PNG_BYTES = b"\x89PNG\r\n\x1a\nnot really an image but bytes are bytes"
PNG_URI = "data:image/png;base64," + base64.b64encode(PNG_BYTES).decode()


def chat(content: object, **body: object) -> ChatRequest:
    return ChatRequest({"model": "m", "messages": [{"role": "user", "content": content}], **body})


def test_chat_request_exposes_text_images_and_schema() -> None:
    request = ChatRequest(
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "old turn"},
                {"role": "assistant", "content": "ok"},
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": PNG_URI}},
                        {"type": "text", "text": "describe"},
                        {"type": "text", "text": "this"},
                    ],
                },
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "X", "schema": {"type": "object"}},
            },
            "max_completion_tokens": 40,
            "logprobs": True,
            "top_logprobs": 3,
        },
        attempt=2,
    )
    assert request.text == "describe\nthis"
    assert request.image_sha256 == [hashlib.sha256(PNG_BYTES).hexdigest()]
    assert request.images[0].mime == "image/png" and request.images[0].data == PNG_BYTES
    assert request.json_schema == {"type": "object"}
    assert (request.max_tokens, request.logprobs, request.top_logprobs, request.attempt) == (
        40,
        True,
        3,
        2,
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model": "m", "messages": []}, "'messages' must be a non-empty array"),
        ({"messages": [{"role": "user", "content": "x"}]}, "you must provide a model parameter"),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}
                        ],
                    }
                ],
            },
            "messages[0]: image data URI is not valid base64",
        ),
    ],
)
def test_chat_request_rejects_bad_bodies(body: dict[str, object], message: str) -> None:
    with pytest.raises(BadRequest, match=message.replace("[", r"\[").replace("]", r"\]")):
        ChatRequest(body)


def test_judge_sections_use_line_start_headings_only() -> None:
    judge = JudgeResponder()
    text = "Compare the prompt: and description: below.\n## Prompt: a cat\non a mat\n**Description:** a dog\n"
    assert judge.sections(text) == ("a cat\non a mat", "a dog")
    with_end = JudgeResponder(end_marker=r"(?im)^answer:")
    assert with_end.sections("PROMPT: a b\nDESCRIPTION: c d\nANSWER: json please") == ("a b", "c d")
    assert judge.sections("nothing here") == (None, None)


def test_judge_score_is_scaled_jaccard_and_missing_sections_are_bad_requests() -> None:
    # content words: {golden, retriever, puppy, grass} vs {golden, puppy, beach}: 2 / 5
    assert jaccard("A golden retriever puppy on the grass", "a golden puppy at the beach") == 0.4
    reply = JudgeResponder()(
        chat(
            "PROMPT: A golden retriever puppy on the grass\nDESCRIPTION: a golden puppy at the beach"
        )
    )
    assert reply.data["score"] == 40
    with pytest.raises(BadRequest, match="no DESCRIPTION section found"):
        JudgeResponder()(chat("PROMPT: only a prompt"))
    with pytest.raises(
        BadRequest, match="neither the PROMPT nor the DESCRIPTION has a content word"
    ):
        JudgeResponder()(chat("PROMPT: the a\nDESCRIPTION: of"))


def test_judge_uses_the_image_description_when_the_request_has_an_image() -> None:
    sha = hashlib.sha256(PNG_BYTES).hexdigest()
    judge = JudgeResponder(describer=DescribeResponder({sha: "a red fox on a stone"}))
    content = [
        {"type": "image_url", "image_url": {"url": PNG_URI}},
        {"type": "text", "text": "PROMPT: a red fox"},
    ]
    assert judge(chat(content)).data["score"] == 67  # {red, fox} vs {red, fox, stone}: 2/3


def test_fill_schema_follows_refs_ranges_enums_and_arrays() -> None:
    schema = {
        "$defs": {"Label": {"enum": ["aligned", "misaligned"], "type": "string"}},
        "type": "object",
        "properties": {
            "analysis": {"type": "string"},
            "final_score": {
                "anyOf": [{"type": "number", "minimum": 1, "maximum": 5}, {"type": "null"}]
            },
            "label": {"$ref": "#/$defs/Label"},
            "missing": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "count": {"type": "integer", "minimum": 2},
            "ok": {"type": "boolean"},
        },
        "required": ["analysis", "final_score"],
    }
    filled = fill_schema(schema, schema, {"jaccard": 0.5, "rationale": "because"})
    assert filled == {
        "analysis": "because",
        "final_score": 3,  # 1 + 0.5 * 4
        "label": "aligned",
        "missing": [""],
        "count": 2,
        "ok": True,
    }


def test_content_faults_follow_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "score": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["reason", "score"],
    }
    good = Reply(data={"reason": "r", "score": 4})
    assert apply_content_fault(Fault("invalid_schema"), good, schema).data == {"score": 4}
    assert apply_content_fault(
        Fault("invalid_schema", variant="out_of_range"), good, schema
    ).data == {
        "reason": "r",
        "score": 20,  # 10 + (10 - 1) + 1
    }
    fenced = apply_content_fault(Fault("fenced"), good, schema).text
    assert json.loads(fenced.split("```json\n")[1].split("\n```")[0]) == good.data


def test_describe_is_deterministic_long_and_prefers_stored_descriptions(tmp_path: Path) -> None:
    sha_a, sha_b = hashlib.sha256(b"a").hexdigest(), hashlib.sha256(b"b").hexdigest()
    text = describe_from_hash(sha_a)
    assert text == describe_from_hash(sha_a) != describe_from_hash(sha_b)
    assert 250 <= len(text.split()) <= 300
    path = tmp_path / "descriptions.jsonl"
    path.write_text(
        json.dumps({"image_sha256": hashlib.sha256(PNG_BYTES).hexdigest(), "description": "stored"})
        + "\n"
    )
    describe = DescribeResponder(load_descriptions(path))
    assert (
        describe(chat([{"type": "image_url", "image_url": {"url": PNG_URI}}])).content == "stored"
    )
    with pytest.raises(BadRequest, match="no image to describe"):
        describe(chat("no image"))


def test_loaders_name_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"image_sha256": "x", "description": "y"}\n{oops\n')
    with pytest.raises(DataError, match=r"d\.jsonl:2: not valid JSON"):
        load_descriptions(path)
    path.write_text('{"image_sha256": "x"}\n')
    with pytest.raises(
        DataError,
        match=r"d\.jsonl:1: expected an object with string 'image_sha256' and 'description'",
    ):
        load_descriptions(path)
    script = tmp_path / "s.jsonl"
    script.write_text(
        '{"content": "hi"}\n\n{"json": {"score": 1}}\n{"fault": "429", "retry_after": 3}\n{"fault": "timout"}\n'
    )
    with pytest.raises(
        DataError, match=r"s\.jsonl:5: unknown fault kind 'timout' \(did you mean 'timeout'\?\)"
    ):
        load_script(script)
    script.write_text(
        '{"content": "hi"}\n\n{"json": {"score": 1}}\n{"fault": "429", "retry_after": 3}\n'
    )
    assert load_script(script) == [
        Reply(content="hi"),
        Reply(data={"score": 1}),
        Reply(fault=Fault("429", retry_after=3)),
    ]


def test_scripted_and_auto_responders() -> None:
    scripted = ScriptedResponder(["a", {"b": 1}])
    assert [scripted(chat("x")).text for _ in range(2)] == ["a", '{"b": 1}']
    with pytest.raises(RuntimeError, match="no replies left \\(it had 2\\)"):
        scripted(chat("x"))
    cycling = ScriptedResponder(["a", "b"], cycle=True)
    assert [cycling(chat("x")).text for _ in range(3)] == ["a", "b", "a"]
    auto = build_responder("auto")
    assert isinstance(auto, AutoResponder)
    assert auto(chat("plain words")).text == "plain words"
    assert auto(chat("PROMPT: red fox\nDESCRIPTION: red fox")).data["score"] == 100
    assert (
        len(auto(chat([{"type": "image_url", "image_url": {"url": PNG_URI}}])).text.split()) >= 250
    )


def test_names_are_checked_with_hints() -> None:
    with pytest.raises(
        ConfigError, match="unknown responder 'judeg' \\(did you mean 'judge'\\?\\)"
    ):
        build_responder("judeg")
    with pytest.raises(ConfigError, match="unknown fault kind '5O0'"):
        Fault("5O0")
    with pytest.raises(ConfigError, match="the 'scripted' responder needs replies"):
        build_responder("scripted")
    with pytest.raises(ConfigError, match="host '0.0.0.0' is not loopback"):
        FakeOpenAIServer(host="0.0.0.0")


def test_tokenize_is_lossless_and_default_logprobs_are_distributions() -> None:
    text = 'The score: 1234, "ok"!\n  done  '
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert tokens[:5] == ["The", " score", ":", " 123", "4"]
    items = default_logprobs("x 0", 3)
    assert [t["token"] for t in items[1]["top_logprobs"]] == [" 0", " 1", " 2"]  # no negatives
    assert items[0]["logprob"] == pytest.approx(math.log(0.9))
    assert sum(math.exp(t["logprob"]) for t in items[0]["top_logprobs"]) < 1.0
    assert items[0]["bytes"] == [120]


def test_hashed_embeddings_are_unit_vectors_and_reward_shared_words() -> None:
    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    base = hashed_embedding("a red fox sleeping on a mossy stone", 256)
    near = hashed_embedding("the red fox sleeps on a stone", 256)
    far = hashed_embedding("quarterly tax accounting spreadsheet", 256)
    assert cos(base, base) == pytest.approx(1.0)
    assert cos(base, near) > 0.5 > abs(cos(base, far))
    assert content_words("The Red fox, the RED fox!") == ["red", "fox", "red", "fox"]
    assert hashed_embedding("!!!", 8) == hashed_embedding("!!!", 8)


def test_sliding_window_limiter_admits_rpm_per_window() -> None:
    limiter = SlidingWindowLimiter(rpm=2, window=60.0)
    assert limiter.admit(0.0) is None and limiter.admit(10.0) is None
    assert limiter.admit(20.0) == pytest.approx(40.0)  # the 0.0 admission leaves at 60.0
    assert limiter.admit(60.0) is None  # rejected requests did not count
    assert limiter.admit(65.0) == pytest.approx(5.0)
