"""`models.litellm.raw.raw_request`: the provider body litellm would send, built without
sending it (batch lines and `titjudge explain` are made of it).

litellm logs each captured request as a curl command run through its secret-redacting
regexes, which with an inlined image cost 0.85 s a line (benchmarks/batch_line_build.py);
titjudge switches that log off while it builds, and only then."""

from __future__ import annotations

import io

import litellm
import pytest
from PIL import Image

from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.factory import build
from titjudge.models.litellm.raw import raw_request
from titjudge.records.image_input import ImageInput
from titjudge.records.spec import parse_model_spec


def _request() -> GenerateRequest:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 40, 40)).save(buffer, "PNG")
    return GenerateRequest(prompt="Describe the image.", images=(ImageInput(buffer.getvalue()),))


@pytest.mark.parametrize("logging_off_before", [False, True])
def test_the_body_is_litellms_and_its_logging_setting_is_left_as_found(
    logging_off_before, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    backend = build(
        parse_model_spec("litellm:openai/gpt-4o"), ModelOptions(api_base="http://127.0.0.1:9/v1")
    )
    request = _request()
    litellm.turn_off_message_logging = logging_off_before
    try:
        raw = raw_request(backend, request)
        assert litellm.turn_off_message_logging is logging_off_before
    finally:
        litellm.turn_off_message_logging = False
    body = raw["raw_request_body"]
    assert raw["raw_request_api_base"].startswith("http://127.0.0.1:9/v1")
    assert body["model"] == "gpt-4o"
    (message,) = body["messages"]
    kinds = [part["type"] for part in message["content"]]
    assert kinds == ["image_url", "text"]
    assert message["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
