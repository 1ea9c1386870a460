"""The call layer against a real HTTP server on loopback, driven through litellm."""

import asyncio
import time

import pytest
from doubles.server import Fault

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.calls.pacing import HEADROOM, LATENESS
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.image_input import ImageInput

GOOD = {"rationale": "all there", "score": 77}


def client(server, tmp_path, **options):
    opts = ModelOptions(
        **{"api_base": server.url, "backoff_initial": 0.01, "backoff_max": 2.0, **options}
    )
    hub = ModelHub(CallCache(tmp_path / "cache"))
    return hub.text_client("litellm:openai/test-model", opts)


def ask(c, prompt="PROMPT:\na red cat\n\nDESCRIPTION:\na red cat", **kw):
    return asyncio.run(
        c.structured(GenerateRequest(prompt=prompt, **kw), JudgeVerdict, role="judge", probe=SEND)
    )


def test_transient_errors_retry_then_succeed(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script(Fault("500"), Fault("503"), Fault("429", retry_after=0.0), GOOD)
    result = ask(client(server, tmp_path))
    assert result.ok and result.value.score == 77
    assert result.attempts == 4 and server.stats.total == 4


def test_retry_after_is_honoured(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script(Fault("429", retry_after=0.6), GOOD)
    started = time.perf_counter()
    result = ask(client(server, tmp_path, backoff_initial=0.0))
    assert result.ok and time.perf_counter() - started >= 0.6
    arrivals = server.stats.timestamps
    assert arrivals[1] - arrivals[0] >= 0.55


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("400", "Invalid value for 'messages'"),  # the server's own text
        ("401", "Incorrect API key provided"),
        ("context_length", "context length exceeded"),
    ],
)
def test_permanent_errors_fail_at_once(server, tmp_path, monkeypatch, fault, message):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script(Fault(fault), GOOD)
    result = ask(client(server, tmp_path))
    assert not result.ok and result.value is None
    assert message in result.error
    assert server.stats.total == 1


def test_gives_up_after_max_attempts_with_reason(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script(*[Fault("503")] * 3)
    result = ask(client(server, tmp_path, max_attempts=3))
    assert not result.ok and result.error.startswith("gave up after 3 attempts")
    assert server.stats.total == 3


def test_timeout_is_transient(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script(Fault("timeout", delay=3.0), GOOD)
    result = ask(client(server, tmp_path, timeout=0.5))
    assert result.ok and result.attempts == 2


def test_fenced_json_is_accepted_without_reask(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script("Sure!\n```json\n" + '{"rationale": "x", "score": 42}' + "\n```")
    result = ask(client(server, tmp_path))
    assert result.ok and result.value.score == 42 and not result.reasked
    assert server.stats.total == 1


def test_invalid_output_is_reasked_once_with_the_error(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    seen = []
    server.script('{"rationale": "x", "score": 140}', GOOD)
    original = server.responder
    server.responder = lambda req: (seen.append(req), original(req))[1]
    result = ask(client(server, tmp_path))
    assert result.ok and result.reasked and result.value.score == 77
    assert server.stats.total == 2


def test_invalid_twice_is_a_failure_with_raw_text_and_not_cached(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script("no json here", "still none")
    c = client(server, tmp_path)
    result = ask(c)
    assert not result.ok and result.value is None
    assert "invalid output after re-ask" in result.error and result.raw == "still none"
    again = ask(c)  # the same run asks it again: the failure is shared, nothing is sent
    assert not again.ok and again.error == result.error and server.stats.total == 2
    server.script(GOOD)
    assert ask(client(server, tmp_path)).ok  # a re-run asks again: nothing was cached
    assert server.stats.total == 3


def test_cache_hit_skips_server_and_reports_original_usage(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    first = ask(client(server, tmp_path))
    second = ask(client(server, tmp_path))  # a new hub: only the disk cache is shared
    assert first.ok and second.ok and second.cached and not first.cached
    assert second.value == first.value and second.tokens_in == first.tokens_in > 0
    assert server.stats.total == 1


def test_timeout_setting_does_not_change_the_key_but_temperature_does(
    server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ask(client(server, tmp_path, timeout=30))
    assert ask(client(server, tmp_path, timeout=99)).cached
    assert not ask(client(server, tmp_path), temperature=0.3).cached
    assert server.stats.total == 2


def test_concurrent_identical_calls_share_one_request(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    c = client(server, tmp_path)

    async def many():
        req = GenerateRequest(prompt="PROMPT:\na red cat\n\nDESCRIPTION:\na red cat")
        return await asyncio.gather(
            *(c.structured(req, JudgeVerdict, role="judge", probe=SEND) for _ in range(10))
        )

    results = asyncio.run(many())
    assert all(r.ok for r in results) and server.stats.total == 1
    assert c.usage["judge"].calls == 10 and c.usage["judge"].cache_hits == 9


@pytest.mark.slow
def test_concurrency_limit_holds(tmp_path, monkeypatch):
    from doubles.server import FakeOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(responder="auto", latency=0.1) as srv:
        c = client(srv, tmp_path, concurrency=4)

        async def many():
            reqs = [GenerateRequest(prompt=f"PROMPT:\nx{i}\n\nDESCRIPTION:\ny") for i in range(16)]
            return await asyncio.gather(
                *(c.structured(r, JudgeVerdict, role="judge", probe=SEND) for r in reqs)
            )

        assert all(r.ok for r in asyncio.run(many()))
        assert srv.stats.max_in_flight == 4


def test_rpm_limit_spaces_requests(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    c = client(server, tmp_path, rpm=600)  # one start per 0.1 s

    async def many():
        # litellm's first call builds its HTTP client and holds the others back meanwhile
        await c.structured(
            GenerateRequest(prompt="PROMPT:\nwarm\n\nDESCRIPTION:\nup"),
            JudgeVerdict,
            role="j",
            probe=SEND,
        )
        await asyncio.sleep(0.15)
        server.reset_stats()
        reqs = [GenerateRequest(prompt=f"PROMPT:\nx{i}\n\nDESCRIPTION:\ny") for i in range(6)]
        return await asyncio.gather(
            *(c.structured(r, JudgeVerdict, role="judge", probe=SEND) for r in reqs)
        )

    pacer = c.limiter.rpm_pacer
    assert pacer is not None
    grants: list[float] = []
    grant = pacer.grant

    def granted(now: float, cost: float) -> None:  # each start, by the limiter's own clock
        grants.append(now)
        grant(now, cost)

    monkeypatch.setattr(pacer, "grant", granted)
    asyncio.run(many())
    assert server.stats.total == 6 and len(grants) == 7  # the warm-up's and the six
    # the schedule spaces starts 60 / (rpm x HEADROOM) apart; a start woken late by up to half
    # a spacing keeps it (the next is not pushed back), a later one restarts it from itself:
    # so the k-th start after any start is at least (k - 1/2) spacings after it, however
    # loaded the machine (load only makes starts later); nothing about the server's clock is
    # asserted, as the time from the grant to the wire is the machine's
    spacing = 60 / (600 * HEADROOM)
    starts = grants[1:]
    for i, first in enumerate(starts):
        for k, later in enumerate(starts[i + 1 :], start=1):
            assert later - first >= (k - LATENESS) * spacing - 1e-9, (i, k, starts)


def test_images_reach_the_server_as_data_uris(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    seen = []
    original = server.responder
    server.responder = lambda req: (seen.append(req), original(req))[1]
    image = ImageInput(data=b"\x89PNG\r\n\x1a\n" + b"0" * 64, mime="image/png")
    c = client(server, tmp_path)
    result = asyncio.run(
        c.text(GenerateRequest(prompt="Describe.", images=(image,)), role="describer", probe=SEND)
    )
    assert result.ok and result.value
    assert [part.sha256 for part in seen[0].images] == [image.sha256]


def test_missing_api_key_env_stops_the_first_call_that_must_be_sent(server, tmp_path, monkeypatch):
    """The key is read when a call must really be sent, not when the client is made (a cached
    answer needs none): then its absence is a ConfigError naming the variable, not a failure
    record, and nothing is sent."""
    from titjudge.errors import ConfigError

    monkeypatch.delenv("TITJUDGE_NO_SUCH_KEY", raising=False)
    made = client(server, tmp_path, api_key_env="TITJUDGE_NO_SUCH_KEY")
    with pytest.raises(ConfigError, match="but TITJUDGE_NO_SUCH_KEY is not set"):
        ask(made)
    assert server.stats.total == 0


def test_cost_is_litellms_price_or_unknown_never_zero(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    opts = ModelOptions(api_base=server.url)
    hub = ModelHub(CallCache(None))
    req = GenerateRequest(prompt="PROMPT:\na red cat\n\nDESCRIPTION:\na red cat")
    priced = asyncio.run(
        hub.text_client("litellm:openai/gpt-4o-mini", opts).text(req, role="j", probe=SEND)
    )
    unpriced = asyncio.run(
        hub.text_client("litellm:openai/test-model", opts).text(req, role="j", probe=SEND)
    )
    assert priced.ok and priced.cost is not None and priced.cost > 0
    assert unpriced.ok and unpriced.cost is None
