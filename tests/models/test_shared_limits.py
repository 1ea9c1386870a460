"""A model's rpm holds across every client of it (issue 30): two roles that differ only in
`max_image_pixels` (as the shipped tit-llm-gpt4o.yaml's describer and judge do) get clients of
their own, and used to get a limiter each, so the model was sent twice its rpm. The loopback
server counts the requests' arrival times."""

from __future__ import annotations

import asyncio

import pytest
from doubles.server import FakeOpenAIServer

from titjudge.cache.store import CallCache
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub

pytestmark = pytest.mark.slow  # paced requests to a loopback server, seconds of wall each


MODEL = "litellm:openai/test-model"
#: 10 requests a second; each role sends N at once: one limiter per client would send all
#: 2N (16) within a second
RPM, N = 600, 8


def most_in_one_second(arrivals: list[float]) -> int:
    arrivals = sorted(arrivals)
    return max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals)


@pytest.mark.parametrize(
    "judge",
    [
        {"max_image_pixels": 1 << 20},
        {"params": {"seed": 1}},
        {"max_image_pixels": 1 << 20, "rpm": RPM},  # the same rpm, set on both
    ],
)
def test_roles_that_differ_in_other_options_share_one_rpm(tmp_path, monkeypatch, judge):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(responder=lambda request: "ok", latency=0.01) as server:
        hub = ModelHub(CallCache(tmp_path / "cache"), default_rpm=RPM)
        base = {"api_base": server.url, "backoff_initial": 0.01}
        describer = hub.text_client(MODEL, ModelOptions(**base, max_image_pixels=1 << 22))
        judging = hub.text_client(MODEL, ModelOptions(**base, **judge))
        assert describer is not judging  # two clients, as before

        async def main() -> None:
            await describer.text(
                GenerateRequest(prompt="warm up", max_tokens=4), role="warm", probe=SEND
            )
            server.stats.reset()
            await asyncio.gather(
                *(
                    client.text(
                        GenerateRequest(prompt=f"{role} {i}", max_tokens=4), role=role, probe=SEND
                    )
                    for i in range(N)
                    for client, role in ((describer, "describe"), (judging, "judge"))
                )
            )

        asyncio.run(main())
        arrivals = [record.arrived for record in server.stats.records]
    assert len(arrivals) == 2 * N
    # paced at 97% of 10/s: at most ~11 starts in any second (9.7 + the window's edges); two
    # limiters sent up to twice that
    assert most_in_one_second(arrivals) <= 12
    assert max(arrivals) - min(arrivals) >= (2 * N - 1) / (RPM / 60) * 0.9
    assert describer.limiter is judging.limiter
