"""`api_base` as a list: one `litellm:` model on several endpoints (replicas), its calls spread
by litellm's Router with each endpoint's own concurrency; config checks, the preflight, the
run record, and thinking / structured output planned as for one endpoint."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from doubles.relies import relies_on
from doubles.server import FakeOpenAIServer, Fault
from pydantic import ValidationError

from titjudge.cache.store import CallCache
from titjudge.cli import main
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.models.litellm.backend import LiteLLMBackend
from titjudge.models.litellm.router import RouterBackend
from titjudge.models.litellm.settings import settings
from titjudge.models.preflight import model_problems
from titjudge.records.spec import parse_model_spec

A, B = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"
SECRET = "sk-endpoints-secret-0123456789"


@pytest.mark.parametrize(
    ("api_base", "message"),
    [
        ([], "empty list"),
        (["http://127.0.0.1:9/v1", "127.0.0.1:10"], "'127.0.0.1:10' is not an http\\(s\\) URL"),
        (["ftp://host/v1", A], "is not an http\\(s\\) URL"),
        ([A, B, A + "/"], "lists 'http://127.0.0.1:9/v1/' twice"),
    ],
)
def test_a_bad_endpoint_list_is_refused(api_base, message):
    with pytest.raises(ValidationError, match=message):
        ModelOptions(api_base=api_base)


def test_a_list_of_one_is_that_url_and_a_string_stays_a_string():
    assert ModelOptions(api_base=[A]).api_base == A
    assert ModelOptions(api_base=A).api_base == A
    assert ModelOptions(api_base=[A, B]).endpoints == [A, B]


def test_concurrency_and_rpm_are_per_endpoint(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    hub = ModelHub(CallCache(None), default_concurrency=10)
    two = hub.text_client("litellm:openai/a", ModelOptions(api_base=[A, B], rpm=60))
    assert two.limiter.concurrency == 20 and two.limiter.rpm == 120
    own = hub.text_client("litellm:openai/b", ModelOptions(api_base=[A, B], concurrency=3))
    assert own.limiter.concurrency == 6
    # the same endpoints make the same client (shared limits across roles)
    assert hub.text_client("litellm:openai/b", ModelOptions(api_base=[A, B], concurrency=3)) is own


@pytest.mark.slow
def test_each_endpoint_gets_at_most_its_concurrency(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(latency=0.3) as first, FakeOpenAIServer(latency=0.3) as second:
        opts = ModelOptions(api_base=[first.url, second.url], concurrency=3)
        client = ModelHub(CallCache(tmp_path / "cache")).text_client("litellm:openai/m", opts)

        async def run():
            return await asyncio.gather(
                *(
                    client.text(GenerateRequest(prompt=f"p{i}"), role="describer", probe=SEND)
                    for i in range(12)
                )
            )

        assert all(r.ok for r in asyncio.run(run()))  # two waves of the 6 places
        assert first.stats.max_in_flight <= 3 and second.stats.max_in_flight <= 3
        assert first.stats.max_in_flight + second.stats.max_in_flight >= 5
        assert first.stats.total + second.stats.total == 12
        assert client.limiter.peak_in_flight == 6


def test_a_429_keeps_its_retry_after_through_the_router(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    good = {"rationale": "fine", "score": 70}
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        for server in (first, second):
            server.script(Fault("429", retry_after=1.0), good)
        opts = ModelOptions(api_base=[first.url, second.url], backoff_initial=0.0)
        client = ModelHub(CallCache(tmp_path / "cache")).text_client("litellm:openai/m", opts)
        started = time.perf_counter()
        result = asyncio.run(
            client.structured(GenerateRequest(prompt="p"), JudgeVerdict, role="judge", probe=SEND)
        )
        assert result.ok and result.value.score == 70
        # both endpoints said 429 in the first attempt (failover), the next waited Retry-After
        said = (first.stats.by_status[429], second.stats.by_status[429])
        relies_on("Router failing over to the other endpoint within one call", said == (1, 1), said)
        assert time.perf_counter() - started >= 1.0


def test_preflight_reads_an_endpoint_list_as_one_server():
    vllm = parse_model_spec("litellm:hosted_vllm/Qwen/Qwen3-8B")
    assert model_problems(vllm, ModelOptions(api_base=[A, B])) == []
    openai = parse_model_spec("litellm:openai/local-model")
    assert model_problems(openai, ModelOptions(api_base=[A, B])) == ["OPENAI_API_KEY not set"]


def test_thinking_and_schemas_are_planned_as_for_one_endpoint(monkeypatch):
    monkeypatch.setenv("TITJUDGE_TEST_KEY", SECRET)
    spec = parse_model_spec("litellm:openai/Qwen/Qwen3-14B")
    one = ModelOptions(api_base=A, api_key_env="TITJUDGE_TEST_KEY")
    two = ModelOptions(api_base=[A, B], api_key_env="TITJUDGE_TEST_KEY", concurrency=4)
    assert settings(spec, two).thinking == settings(spec, one).thinking
    assert settings(spec, two).cache_facts() == settings(spec, one).cache_facts()
    single, routed = LiteLLMBackend(spec, one), RouterBackend(spec, two)
    request = GenerateRequest(prompt="p", json_schema=JudgeVerdict.model_json_schema())
    expected = single.request_kwargs(request)
    del expected["api_base"], expected["api_key"]
    assert routed.request_kwargs(request) == expected
    assert routed.capabilities == single.capabilities
    # the run record lists the endpoints, never the key
    record = json.dumps(routed.describe())
    assert json.dumps([A, B]) in record and SECRET not in record


@pytest.mark.slow
def test_every_endpoint_serves_the_model_with_the_key(monkeypatch):
    """Each endpoint gets the calls of the one model, with the key `api_key_env` names (a
    server that wants another key would answer 401); per-endpoint slots are tested above."""
    monkeypatch.setenv("TITJUDGE_TEST_KEY", SECRET)
    spec = parse_model_spec("litellm:openai/Qwen/Qwen3-14B")
    with FakeOpenAIServer(api_key=SECRET) as first, FakeOpenAIServer(api_key=SECRET) as second:
        urls = [first.url, second.url]
        routed = RouterBackend(spec, ModelOptions(api_base=urls, api_key_env="TITJUDGE_TEST_KEY"))

        async def calls():
            asked = [GenerateRequest(prompt=f"p{i}") for i in range(20)]
            return await asyncio.gather(*(routed.generate(r) for r in asked))

        assert [g.text for g in asyncio.run(calls())] == [f"p{i}" for i in range(20)]
        for server in (first, second):  # 20 shuffled calls: each endpoint gets some
            assert server.stats.by_status[200] > 0 and server.stats.by_status[401] == 0


def test_a_bad_request_is_permanent_through_the_router(tmp_path, monkeypatch):
    """The 400 is classified as for one endpoint: permanent, no titjudge retry, so no
    endpoint is asked twice (litellm's Router may ask the other one within the attempt)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        for server in (first, second):
            server.script(Fault("400"))
        opts = ModelOptions(api_base=[first.url, second.url])
        client = ModelHub(CallCache(tmp_path / "cache")).text_client("litellm:openai/m", opts)
        result = asyncio.run(client.text(GenerateRequest(prompt="p"), role="describer", probe=SEND))
        assert not result.ok and "Invalid value for 'messages'" in result.error
        assert result.attempts == 1
        asked = (first.stats.total, second.stats.total)
        assert max(asked) == 1 and sum(asked) in (1, 2), asked


def test_a_duplicate_endpoint_in_a_config_is_one_line_and_exit_2(tmp_path, capsys):
    shipped = Path(__file__).resolve().parents[2] / "configs" / "vllm-replicas.yaml"
    config = tmp_path / "dup.yaml"
    config.write_text(
        shipped.read_text().replace('"http://127.0.0.1:8010/v1"', '"http://127.0.0.1:8000/v1/"')
    )
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"titjudge: error: {config}: describer.api_base: "
        "api_base lists 'http://127.0.0.1:8000/v1/' twice"
    )


def test_an_unpriced_model_on_several_endpoints_keeps_its_cost_unknown(tmp_path, monkeypatch):
    """litellm's Router registers each deployment's model in litellm's price map with no price;
    litellm then priced every call of that model at $0 in the whole process (also a later
    single-endpoint call), instead of unknown. A priced model keeps its price."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    req = GenerateRequest(prompt="PROMPT:\na red cat\n\nDESCRIPTION:\na red cat")
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        hub = ModelHub(CallCache(None))
        listed = ModelOptions(api_base=[first.url, second.url])
        routed = asyncio.run(
            hub.text_client("litellm:openai/test-model", listed).text(req, role="j", probe=SEND)
        )
        priced = asyncio.run(
            hub.text_client("litellm:openai/gpt-4o-mini", listed).text(req, role="j", probe=SEND)
        )
        single = ModelOptions(api_base=first.url)
        later = asyncio.run(
            ModelHub(CallCache(None))
            .text_client("litellm:openai/test-model", single)
            .text(req, role="j", probe=SEND)
        )
    assert routed.ok and routed.cost is None
    assert later.ok and later.cost is None
    assert priced.ok and priced.cost is not None and priced.cost > 0
