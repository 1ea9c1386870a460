"""The two send paths of a `litellm:` model at an OpenAI-compatible endpoint: through
`litellm.acompletion` (`transport: litellm`) and direct (`transport: direct`, titjudge's own
httpx client, `models.litellm.wire`). Each request is sent both ways to one loopback server
that keeps the bytes it receives (`doubles.wire_capture`), and each canned reply is read by
both: the bytes on the wire, the Generation made of a reply, and the error made of a failure
must be the same, whichever path sent it.

Reply shapes: OpenAI's chat completion object and error object (platform.openai.com/docs/
api-reference/chat/object, .../docs/guides/error-codes), vLLM's reasoning field
(docs.vllm.ai/en/v0.11.2/features/reasoning_outputs/: `message.reasoning`), OpenRouter's
error inside a 200 (openrouter.ai/docs/api-reference/errors: `finish_reason: "error"` and
`choices[0].error`), Azure's content filter 400 (learn.microsoft.com, Azure OpenAI "Content
filtering": `code: "content_filter"`, `innererror.code: "ResponsibleAIPolicyViolation"`),
llama-cpp-python's 500 for a response_format it refuses (docs/research/server-dialects.md).
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import socket

import pytest
from doubles.wire_capture import Canned, CaptureServer, completion
from PIL import Image

from titjudge.config.load import load_config
from titjudge.errors import ConfigError
from titjudge.models.core.base import (
    BlockedError,
    GenerateRequest,
    PermanentError,
    QuotaExhaustedError,
    TransientError,
    is_unbilled,
)
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.factory import build
from titjudge.models.litellm.wire.client import POOL
from titjudge.records.image_input import ImageInput
from titjudge.records.spec import parse_model_spec

KEY = "TITJUDGE_WIRE_TEST_KEY"
SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "why": {"type": "string"}},
    "required": ["score", "why"],
    "additionalProperties": False,
}


def _png() -> ImageInput:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 30, 30)).save(buffer, format="PNG")
    return ImageInput(buffer.getvalue(), "image/png")


def _backend(model: str, transport: str, url: str, **options):
    made = ModelOptions(api_base=url, api_key_env=KEY, transport=transport, **options)
    return build(parse_model_spec(f"litellm:{model}"), made)


def _both(model: str, url: str, **options):
    return [_backend(model, t, url, **options) for t in ("litellm", "direct")]


async def _generate(backend, request):
    try:
        return await backend.generate(request)
    except Exception as exc:
        return backend.classify_error(exc)
    finally:
        await backend.aclose()


def _send_both(server, model, request, *replies, **options):
    """What each path made of `request` (and the same `replies`), and what arrived."""
    out = []
    for backend in _both(model, server.url, **options):
        server.reply(*replies)
        out.append(asyncio.run(_generate(backend, request)))
    return out, server.arrived[-2:]


#: (model, options, request): each sent both ways
REQUESTS = [
    (
        "openai/gpt-4o",
        {},
        GenerateRequest(
            "Describé the image — every object, ünïcode kept",
            system="You are a careful describer.",
            images=(_png(),),
            max_tokens=300,
            temperature=0.0,
        ),
    ),
    (
        "openai/gpt-4o",
        {"structured_output": "json_schema"},
        GenerateRequest(
            "Score it",
            json_schema=SCHEMA,
            schema_name="verdict",
            top_logprobs=5,
            temperature=0.7,
            sample=3,
            history=(("user", "Score it"), ("assistant", "eleven")),
        ),
    ),
    ("openai/gpt-5", {"thinking": {"effort": "low"}}, GenerateRequest("u", max_tokens=50)),
    ("openai/o3", {}, GenerateRequest("u", max_tokens=40, temperature=None)),
    (
        "hosted_vllm/Qwen/Qwen3-8B",
        {
            "thinking": "off",
            "structured_output": "structured_outputs",
            "params": {"top_k": 20, "repetition_penalty": 1.05, "top_p": 0.8},
        },
        GenerateRequest("Ünïcode score", json_schema=SCHEMA, images=(_png(),)),
    ),
    (
        "hosted_vllm/llama",
        {"structured_output": "json_object", "params": {"stop": ["\n\n"], "seed": 7}},
        GenerateRequest("score", json_schema=SCHEMA, max_tokens=64),
    ),
    (
        "hosted_vllm/tgi",
        {"structured_output": "json_value"},
        GenerateRequest("s", json_schema=SCHEMA),
    ),
    (
        "openai/test-model",
        {"structured_output": "guided_json", "params": {"top_k": 5, "min_p": 0.1}},
        GenerateRequest("s", json_schema=SCHEMA),
    ),
]


@pytest.mark.parametrize(("model", "options", "request_"), REQUESTS)
def test_both_paths_put_the_same_bytes_on_the_wire(monkeypatch, model, options, request_):
    monkeypatch.setenv(KEY, "sk-wire-test")
    with CaptureServer() as server:
        results, (via_litellm, direct) = _send_both(server, model, request_, **options)
    assert all(not isinstance(r, BaseException) for r in results), results
    assert direct.path == via_litellm.path == "/v1/chat/completions"
    assert direct.body == via_litellm.body, (via_litellm.body[:400], direct.body[:400])
    assert direct.headers["Authorization"] == via_litellm.headers["Authorization"]
    assert direct.headers["Content-Type"] == "application/json"
    sent = direct.json()
    assert sent["model"] == model.partition("/")[2]


def test_a_reasoning_model_is_sent_max_completion_tokens_on_both_paths(monkeypatch):
    """Not a copy of litellm's rule alone: the body each path sends says it."""
    monkeypatch.setenv(KEY, "k")
    with CaptureServer() as server:
        _send_both(server, "openai/gpt-5", GenerateRequest("u", max_tokens=50))
        bodies = [a.json() for a in server.arrived]
    assert all("max_tokens" not in b and b["max_completion_tokens"] > 50 for b in bodies)


#: replies each path must read alike
REPLIES = {
    "usage with cached and reasoning tokens": completion(
        "fine",
        usage={
            "prompt_tokens": 1000,
            "completion_tokens": 300,
            "total_tokens": 1300,
            "prompt_tokens_details": {"cached_tokens": 600},
            "completion_tokens_details": {"reasoning_tokens": 200},
        },
    ),
    "vLLM's reasoning field": {
        **completion("the answer"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "the answer", "reasoning": "hmm"},
                "finish_reason": "stop",
            }
        ],
    },
    "thinking inline": completion("<think>long thoughts</think>\n\nthe answer"),
    "cut at max_tokens": {
        **completion("partial"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "partial"},
                "finish_reason": "length",
            }
        ],
    },
    "TGI's eos_token": {
        **completion("done"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "done"},
                "finish_reason": "eos_token",
            }
        ],
    },
    "a refusal": {
        **completion(None),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "refusal": "I can't."},
                "finish_reason": "stop",
            }
        ],
    },
    "logprobs": {
        **completion("7"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "7"},
                "finish_reason": "stop",
                "logprobs": {
                    "content": [
                        {
                            "token": "7",
                            "logprob": -0.1,
                            "bytes": [55],
                            "top_logprobs": [
                                {"token": "7", "logprob": -0.1, "bytes": [55]},
                                {"token": "8", "logprob": -2.5, "bytes": [56]},
                            ],
                        }
                    ]
                },
            }
        ],
    },
}


@pytest.mark.parametrize("name", sorted(REPLIES))
@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "hosted_vllm/Qwen/Qwen3-8B"])
def test_both_paths_read_a_reply_alike(monkeypatch, name, model):
    monkeypatch.setenv(KEY, "k")
    request = GenerateRequest("q", top_logprobs=2 if name == "logprobs" else 0)
    with CaptureServer() as server:
        (via_litellm, direct), _ = _send_both(server, model, request, Canned(REPLIES[name]))
    assert not isinstance(direct, BaseException), direct
    assert direct == via_litellm


def test_a_priced_model_costs_the_same_on_both_paths(monkeypatch):
    """litellm prices gpt-4o-mini from its bundled map; the direct path from the same map."""
    monkeypatch.setenv(KEY, "k")
    reply = Canned(REPLIES["usage with cached and reasoning tokens"])
    with CaptureServer() as server:
        (via_litellm, direct), _ = _send_both(
            server, "openai/gpt-4o-mini", GenerateRequest("q"), reply
        )
    assert via_litellm.cost is not None and via_litellm.cost > 0
    assert direct.cost == pytest.approx(via_litellm.cost, rel=1e-9)
    assert (direct.tokens_in, direct.tokens_out, direct.cached_tokens) == (1000, 300, 600)


def _error_facts(error: BaseException) -> tuple:
    return (
        type(error).__name__,
        getattr(error, "rate_limited", None),
        getattr(error, "retry_after", None),
        getattr(error, "lasting", None),
        is_unbilled(error),
    )


def _openai_error(message: str, kind: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


FAILURES = {
    "rate limit with Retry-After": (
        Canned(
            _openai_error("Rate limit reached", "requests", "rate_limit_exceeded"),
            429,
            {"Retry-After": "7"},
        ),
        TransientError,
    ),
    "quota spent": (
        Canned(
            _openai_error(
                "You exceeded your current quota", "insufficient_quota", "insufficient_quota"
            ),
            429,
        ),
        QuotaExhaustedError,
    ),
    "context window": (
        Canned(
            _openai_error(
                "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.",
                "invalid_request_error",
                "context_length_exceeded",
            ),
            400,
        ),
        PermanentError,
    ),
    "bad key": (
        Canned(
            _openai_error("Incorrect API key provided", "invalid_request_error", "invalid_api_key"),
            401,
        ),
        PermanentError,
    ),
    "unknown model": (
        Canned(
            _openai_error("The model does not exist", "invalid_request_error", "model_not_found"),
            404,
        ),
        PermanentError,
    ),
    "server error": (
        Canned(_openai_error("The server had an error", "server_error"), 500),
        TransientError,
    ),
    "overloaded": (
        Canned(_openai_error("The engine is currently overloaded", "server_error"), 503),
        TransientError,
    ),
    "request shape refused": (
        Canned(
            {
                "detail": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}]"
            },
            500,
        ),
        PermanentError,
    ),
    "content filter": (
        Canned(
            {
                "error": {
                    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
                    "type": None,
                    "param": "prompt",
                    "code": "content_filter",
                    "status": 400,
                    "innererror": {"code": "ResponsibleAIPolicyViolation"},
                }
            },
            400,
        ),
        BlockedError,
    ),
    "error inside a 200": (
        Canned(
            {
                **completion(""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": ""},
                        "finish_reason": "error",
                        "error": {"code": 502, "message": "upstream failed"},
                    }
                ],
            }
        ),
        TransientError,
    ),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_both_paths_make_the_same_error_of_a_failure(monkeypatch, name):
    monkeypatch.setenv(KEY, "k")
    canned, expected = FAILURES[name]
    with CaptureServer() as server:
        (via_litellm, direct), _ = _send_both(server, "openai/gpt-4o", GenerateRequest("q"), canned)
    assert isinstance(via_litellm, expected), via_litellm
    assert _error_facts(direct) == _error_facts(via_litellm), (str(via_litellm), str(direct))
    if name == "rate limit with Retry-After":
        assert direct.retry_after == 7.0 and direct.rate_limited
    if name == "context window":
        assert str(direct).startswith("context length exceeded")


def test_a_refused_connection_is_the_same_error_on_both_paths(monkeypatch):
    monkeypatch.setenv(KEY, "k")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    url = f"http://127.0.0.1:{port}/v1"
    via_litellm, direct = (
        asyncio.run(_generate(b, GenerateRequest("q"))) for b in _both("openai/gpt-4o", url)
    )
    assert isinstance(direct, TransientError)
    assert _error_facts(direct) == _error_facts(via_litellm)
    assert direct.lasting == f"connection refused ({url})"


def test_a_secret_in_an_error_body_is_not_repeated(monkeypatch):
    monkeypatch.setenv(KEY, "sk-very-secret-key-123456")
    echoed = Canned(
        _openai_error(
            "Incorrect API key provided: sk-very-secret-key-123456", "x", "invalid_api_key"
        ),
        401,
    )
    with CaptureServer() as server:
        server.reply(echoed)
        error = asyncio.run(
            _generate(_backend("openai/gpt-4o", "direct", server.url), GenerateRequest("q"))
        )
    assert isinstance(error, PermanentError)
    assert "sk-very-secret-key-123456" not in str(error)


def test_auto_goes_direct_only_where_the_wire_needs_no_translation(monkeypatch):
    monkeypatch.setenv(KEY, "k")
    monkeypatch.setenv("GEMINI_API_KEY", "g")
    url = "http://127.0.0.1:9/v1"
    cases = {
        "openai/gpt-4o": ({"api_base": url}, "direct"),
        "hosted_vllm/Qwen/Qwen3-8B": ({"api_base": url}, "direct"),
        "gemini/gemini-2.5-flash": ({"thinking": "off"}, "litellm"),
        "anthropic/claude-sonnet-4-5": ({}, "litellm"),
        "hosted_vllm/replicas": ({"api_base": [url, "http://127.0.0.2:9/v1"]}, "litellm"),
        "openai/proxied": (
            {"api_base": url, "params": {"custom_llm_provider": "openai"}},
            "litellm",
        ),
    }
    for model, (options, expected) in cases.items():
        made = ModelOptions(api_key_env=KEY, **options)
        backend = build(parse_model_spec(f"litellm:{model}"), made)
        assert (backend.wire is not None) == (expected == "direct"), model
        assert backend.describe()["transport"].startswith(expected), model


def test_transport_litellm_is_honoured(monkeypatch):
    monkeypatch.setenv(KEY, "k")
    backend = _backend("openai/gpt-4o", "litellm", "http://127.0.0.1:9/v1")
    assert backend.wire is None
    assert backend.describe()["transport"] == "litellm (transport: litellm in the config)"


def _config(tmp_path, describer: dict) -> str:
    import yaml

    path = tmp_path / "c.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "data": {"manifest": "m.csv"},
                "describer": describer,
                "judges": [{"name": "lex", "kind": "lexical"}],
            }
        )
    )
    return str(path)


@pytest.mark.parametrize(
    ("describer", "says"),
    [
        (
            {"model": "litellm:gemini/gemini-2.5-flash", "thinking": "off", "transport": "direct"},
            "translates 'gemini'",
        ),
        (
            {
                "model": "litellm:hosted_vllm/q",
                "api_base": ["http://127.0.0.1:9/v1", "http://127.0.0.2:9/v1"],
                "transport": "direct",
            },
            "several endpoints",
        ),
        (
            {"model": "hf:Qwen/Qwen2.5-VL-3B-Instruct", "transport": "litellm"},
            "applies to litellm: models",
        ),
    ],
)
def test_a_transport_the_model_cannot_take_is_refused_at_load(tmp_path, describer, says):
    with pytest.raises(ConfigError) as refused:
        load_config(_config(tmp_path, describer))
    assert says in str(refused.value)
    assert "\n" not in str(refused.value).strip()


def test_models_at_one_endpoint_share_one_client_closed_with_the_last(monkeypatch):
    monkeypatch.setenv(KEY, "k")

    async def two_models(url):
        describer = _backend("hosted_vllm/vlm", "direct", url)
        judge = _backend("hosted_vllm/llm", "direct", url)
        await describer.generate(GenerateRequest("a"))
        await judge.generate(GenerateRequest("b"))
        shared = describer.wire._client is judge.wire._client
        open_both = POOL.open_clients()
        await describer.aclose()
        open_one = POOL.open_clients()
        await judge.aclose()
        return shared, open_both, open_one, POOL.open_clients()

    with CaptureServer() as server:
        shared, open_both, open_one, open_none = asyncio.run(two_models(server.url))
    assert shared
    assert (open_both, open_one, open_none) == (1, 1, 0)


def test_an_image_goes_as_the_same_data_uri_on_both_paths(monkeypatch):
    monkeypatch.setenv(KEY, "k")
    image = _png()
    with CaptureServer() as server:
        _send_both(server, "openai/gpt-4o", GenerateRequest("d", images=(image,)))
        uris = [
            part["image_url"]["url"]
            for arrived in server.arrived
            for part in arrived.json()["messages"][-1]["content"]
            if part["type"] == "image_url"
        ]
    assert uris == [f"data:image/png;base64,{base64.b64encode(image.data).decode()}"] * 2


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_explain_shows_the_bytes_the_models_own_path_sends(monkeypatch, transport):
    from titjudge.models.litellm.explain import explain_request

    monkeypatch.setenv(KEY, "sk-explained-key-987654")
    request = GenerateRequest("Score it", json_schema=SCHEMA, schema_name="verdict")
    with CaptureServer() as server:
        options = ModelOptions(
            api_base=server.url,
            api_key_env=KEY,
            transport=transport,
            structured_output="json_schema",
        )
        spec = parse_model_spec("litellm:openai/gpt-4o")
        shown = explain_request(spec, options, request)
        asyncio.run(_generate(build(spec, options), request))
        arrived = server.arrived[-1]
    assert shown.url == f"{server.url}/chat/completions"
    assert shown.body == arrived.json()
    assert shown.headers.get("Authorization") == "Bearer <redacted>"
    assert "sk-explained-key-987654" not in repr(shown)


def test_a_run_whose_models_all_go_direct_never_imports_litellm(tmp_path):
    """litellm's import costs seconds of CPU a run never spends when no model needs it; the
    child's `-X importtime` lists every module it imported."""
    import subprocess
    import sys

    import yaml
    from doubles.server import FakeOpenAIServer

    from titjudge.data.synth.benchmark import synthesize

    synthesize(tmp_path / "data", n_prompts=2, n_models=2, seed=0, workers=1)
    with FakeOpenAIServer(responder="auto") as server:
        model = {"model": "litellm:openai/vlm", "api_base": server.url, "api_key_env": KEY}
        config = {
            "name": "direct",
            "data": {"manifest": str(tmp_path / "data" / "manifest.jsonl")},
            "describer": model,
            "judges": [{"name": "tit_llm", "kind": "llm", **model}],
            "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
        }
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        env = {**os.environ, KEY: "sk-test", "HF_HUB_OFFLINE": "1"}
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "titjudge", "run", str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        requests = server.stats.snapshot()["total"]
    assert done.returncode == 0, done.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "titjudge.models.litellm.wire.client" in imported
    assert not [name for name in imported if name.split(".")[0] == "litellm"]
    assert requests == 8  # 4 items described and judged, each on the direct path


def test_a_model_list_that_did_not_answer_is_asked_again_by_a_later_reply(monkeypatch):
    """A server with one slot (llama-cpp-python) answers /v1/models after the completions
    queued ahead of it: a lookup that got no answer leaves that reply's own name and is asked
    again, rather than every later reply keeping the name sent."""
    import titjudge.models.litellm.backend as backend_module

    monkeypatch.setenv(KEY, "k")
    loaded = "model/SmolLM2-135M-Instruct.Q4_1.gguf"
    answers = iter([None, [loaded]])
    asked = []

    async def lookup(base, key, timeout):
        asked.append(timeout)
        return next(answers)

    monkeypatch.setattr(backend_module, "served_models", lookup)

    async def three(url):
        made = _backend("openai/smollm2", "direct", url, timeout=45.0)
        try:
            return [(await made.generate(GenerateRequest(f"q{i}"))).model for i in range(3)]
        finally:
            await made.aclose()

    with CaptureServer() as server:
        server.reply(*(Canned(completion("ok", model="smollm2")) for _ in range(3)))
        models = asyncio.run(three(server.url))
    assert models == ["smollm2", loaded, loaded]
    assert asked == [45.0, 45.0]  # the model's own timeout, not a shorter cap


def test_the_direct_path_goes_through_the_proxy_the_environment_names(monkeypatch):
    """HTTP_PROXY as httpx and litellm honour it: a host that does not resolve is reached
    through the proxy (the capture server, which answers what it is sent)."""
    monkeypatch.setenv(KEY, "k")
    with CaptureServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        made = _backend("hosted_vllm/q", "direct", "http://judge.invalid/v1")
        assert made.wire.proxy == proxy.url.removesuffix("/v1"), made.wire.proxy
        reply = asyncio.run(_generate(made, GenerateRequest("through the proxy")))
        assert not isinstance(reply, BaseException), reply
        arrived = proxy.arrived[-1]
    assert reply.text == "ok"
    assert arrived.headers["Host"] == "judge.invalid"
    assert arrived.json()["messages"][-1]["content"] == "through the proxy"


def test_no_proxy_leaves_its_hosts_direct(monkeypatch):
    from titjudge.models.litellm.wire.client import proxy_for

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "vllm.internal,127.0.0.1")
    assert proxy_for("https://api.openai.com/v1") == "http://proxy.example:3128"
    assert proxy_for("https://vllm.internal/v1") is None
    assert proxy_for("http://127.0.0.1:8000/v1") is None  # and no http proxy is set
