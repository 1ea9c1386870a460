"""The fake server's long-tailed latency: a seeded lognormal draw per request."""

from __future__ import annotations

import statistics

import pytest
from doubles.server import FakeOpenAIApp, build_parser, server_from_args
from doubles.server_draws import lognormal_sigma

from titjudge.errors import ConfigError

pytestmark = pytest.mark.doubles  # tests of the fake OpenAI server, not of titjudge


def _delays(app: FakeOpenAIApp, n: int) -> list[float]:
    return sorted(app._delay(f"body-{i}", 1) for i in range(n))


def test_sigma_from_median_and_p95() -> None:
    assert lognormal_sigma(2.0, 8.0) == pytest.approx(0.8428, abs=1e-4)


def test_lognormal_draws_have_the_asked_median_and_p95() -> None:
    app = FakeOpenAIApp(latency=2.0, latency_sigma=lognormal_sigma(2.0, 8.0), seed=3)
    delays = _delays(app, 20_000)
    assert statistics.median(delays) == pytest.approx(2.0, rel=0.04)
    assert delays[int(0.95 * len(delays))] == pytest.approx(8.0, rel=0.06)
    assert min(delays) > 0


def test_draws_are_fixed_by_seed_body_and_attempt() -> None:
    sigma = lognormal_sigma(2.0, 8.0)
    one, two = (
        FakeOpenAIApp(latency=2.0, latency_sigma=sigma),
        FakeOpenAIApp(latency=2.0, latency_sigma=sigma),
    )
    assert one._delay("b", 1) == two._delay("b", 1)
    assert one._delay("b", 1) != one._delay("b", 2)  # a retry draws afresh
    assert FakeOpenAIApp(latency=2.0, latency_sigma=sigma, seed=1)._delay("b", 1) != one._delay(
        "b", 1
    )


def test_without_sigma_the_latency_is_constant_plus_jitter() -> None:
    delays = _delays(FakeOpenAIApp(latency=0.5, jitter=0.1), 200)
    assert delays[0] >= 0.5 and delays[-1] < 0.6


def test_command_line_sets_sigma_and_refuses_a_negative_one() -> None:
    args = build_parser().parse_args(["--latency", "2", "--latency-sigma", "0.84"])
    assert server_from_args(args).latency_sigma == 0.84
    with pytest.raises(ConfigError, match="latency_sigma"):
        FakeOpenAIApp(latency=2.0, latency_sigma=-1.0)
