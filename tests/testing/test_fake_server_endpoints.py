"""Images, embeddings and the GET endpoints of the fake server, over real HTTP."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import struct
import threading
import urllib.request
from typing import Any

import pytest
from doubles.server import ChatRequest, FakeOpenAIServer
from doubles.server_scripts import DescribeResponder, JudgeResponder, build_responder
from doubles.server_text import describe_from_hash
from fake_server_support import embedder, generate, run
from PIL import Image

from titjudge.models.core.base import GenerateRequest, Generation
from titjudge.records.image_input import ImageInput

pytestmark = pytest.mark.doubles  # tests of the fake OpenAI server, not of titjudge


def png(color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buffer, format="PNG")
    return buffer.getvalue()


def describe_image(url: str, image: bytes, text: str) -> Generation:
    """One image and a text in one user turn, sent as titjudge sends them (a data URI)."""
    return generate(url, GenerateRequest(text, images=(ImageInput(image, "image/png"),)))


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def post_json(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def test_describe_hashes_the_decoded_image_and_uses_stored_descriptions() -> None:
    red, blue = png((255, 0, 0)), png((0, 0, 255))
    stored = {hashlib.sha256(red).hexdigest(): "A plain red square."}
    seen: list[ChatRequest] = []
    describe = DescribeResponder(stored)

    def spy(request: ChatRequest) -> Any:
        seen.append(request)
        return describe(request)

    with FakeOpenAIServer(responder=spy) as fake:
        first = describe_image(fake.url, red, "Please describe the image.")
        second = describe_image(fake.url, blue, "Please describe the image.")
    assert first.text == "A plain red square."
    blue_sha = hashlib.sha256(blue).hexdigest()
    assert seen[1].image_sha256 == [blue_sha]
    assert second.text == describe_from_hash(blue_sha)
    assert first.tokens_in == 5 + 4 + 85 + 3  # text, message, one image, primer


def test_lmm_style_judge_request_scores_prompt_against_the_image_description() -> None:
    red = png((255, 0, 0))
    judge = JudgeResponder(
        describer=DescribeResponder({hashlib.sha256(red).hexdigest(): "a red square"})
    )
    with FakeOpenAIServer(responder=judge) as fake:
        response = describe_image(fake.url, red, "Score the image.\nPROMPT: a red square on blue")
    assert json.loads(response.text)["score"] == 67  # {red, square} / {red, square, blue}


def test_embeddings_through_titjudge_and_both_wire_encodings() -> None:
    texts = ["a red fox on a stone", "a red fox sleeping on a stone", "income tax forms"]
    with FakeOpenAIServer(embedding_dim=64) as fake:
        vectors = run(embedder(fake.url).embed(texts))
        plain = post_json(
            fake.url + "/embeddings", {"model": "e", "input": texts[0], "encoding_format": "float"}
        )
        packed = post_json(
            fake.url + "/embeddings",
            {"model": "e", "input": [texts[0]], "encoding_format": "base64", "dimensions": 64},
        )
        assert fake.stats.by_endpoint["/v1/embeddings"] == 3
    assert [len(v) for v in vectors] == [64, 64, 64]
    cos = [[sum(a * b for a, b in zip(u, v, strict=True)) for v in vectors] for u in vectors]
    assert cos[0][1] > 0.8 and abs(cos[0][2]) < 0.3
    served = plain["data"][0]["embedding"]
    assert vectors[0] == pytest.approx(served, abs=1e-12)  # the server's are unit vectors
    decoded = list(struct.unpack("<64f", base64.b64decode(packed["data"][0]["embedding"])))
    assert decoded == [float(struct.unpack("<f", struct.pack("<f", x))[0]) for x in served]
    assert plain["usage"] == {"prompt_tokens": 6, "total_tokens": 6}


def test_models_health_and_stats_endpoints() -> None:
    with FakeOpenAIServer() as fake:
        generate(fake.url, "hello")
        generate(fake.url, "hello")
        root = fake.url.removesuffix("/v1")
        assert get_json(root + "/health") == {"status": "ok"}
        models = get_json(fake.url + "/models")
        stats = get_json(root + "/stats")
    assert [m["id"] for m in models["data"]] == ["test-model"]
    # a model listing (titjudge asks one per backend whose reply echoes the model, so twice
    # here, plus the test's own) is counted by endpoint only: records and statuses are calls
    assert stats["by_endpoint"] == {"/v1/chat/completions": 2, "/v1/models": 3}
    assert stats["by_status"] == {"200": 2}
    assert (stats["duplicates"], stats["distinct_bodies"]) == (1, 1)
    assert [r["endpoint"] for r in stats["records"]] == ["/v1/chat/completions"] * 2


def test_max_concurrent_queues_requests_beyond_it():
    """`max_concurrent` works on that many requests at once and queues the rest (a vLLM
    server's --max-num-seqs): 6 requests of 0.3 s sent at once are all answered, never more
    than 2 worked on at a time (the queue is outside the count of requests in flight)."""
    body = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}]}
    with FakeOpenAIServer(latency=0.3, max_concurrent=2) as server:
        threads = [
            threading.Thread(target=post_json, args=(f"{server.url}/chat/completions", body))
            for _ in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert server.stats.max_in_flight == 2 and server.stats.by_status[200] == 6


def test_request_log_ties_each_judge_call_to_the_image_it_judges() -> None:
    red, blue = png((255, 0, 0)), png((0, 0, 255))
    red_sha, blue_sha = hashlib.sha256(red).hexdigest(), hashlib.sha256(blue).hexdigest()
    prompt = "a red square on a white wall"

    def judge_text(description: str) -> str:
        # as titjudge's judge templates do, instructions follow the description
        return f"PROMPT:\n{prompt}\n\nDESCRIPTION:\n{description}\n\nReply with only JSON."

    auto = build_responder("auto", descriptions={red_sha: "A plain red square."})
    with FakeOpenAIServer(responder=auto) as fake:
        describe_image(fake.url, red, "Please describe the image.")
        blue_text = describe_image(fake.url, blue, "Please describe the image.").text
        for description in ("A plain red square.", blue_text, "a text nobody described"):
            generate(fake.url, judge_text(description))
        records = [(r.image, r.prompt) for r in fake.stats.records]
    prompt_sha = hashlib.sha256(prompt.encode()).hexdigest()
    # the stored description, then one the server derived and served, then an unknown one
    assert records == [
        (red_sha, None),
        (blue_sha, None),
        (red_sha, prompt_sha),
        (blue_sha, prompt_sha),
        (None, prompt_sha),
    ]
