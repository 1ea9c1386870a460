"""A batch job's reply read for the call that asked (`models.calls.batch_answers`): priced at
half the model's own `price`, and unknown, never $0, when the reply reports no usage (as an
online reply is, `models.core.prices.reply_cost`)."""

from typing import Any

import pytest

from titjudge.models.calls.batch_answers import Answer, Deferred, batch_reply, body_hash
from titjudge.models.core.base import GenerateRequest, Generation
from titjudge.models.core.prices import Rates

RATES = Rates(1e-6, 2e-6, 1e-6, "price option")


class _Api:
    def body(self, request: GenerateRequest) -> dict[str, Any]:
        return {"model": "m", "prompt": request.prompt, "max_tokens": request.max_tokens}


class _Backend:
    spec = "litellm:openai/m"

    def batch_api(self) -> _Api:
        return _Api()


def _reply(generation: Generation) -> Generation:
    request = GenerateRequest(prompt="a cube")
    answers = {body_hash(_Api().body(request)): Answer(generation, None)}
    return batch_reply(_Backend(), RATES, request, answers)  # type: ignore[arg-type]


def test_a_reply_is_priced_at_half_the_price_option():
    found = _reply(Generation(text="ok", tokens_in=1000, tokens_out=500))
    assert found.cost == pytest.approx((1000 * 1e-6 + 500 * 2e-6) / 2)
    assert found.max_tokens_sent == 512


def test_a_reply_without_usage_costs_unknown_not_zero():
    assert _reply(Generation(text="ok")).cost is None
    assert _reply(Generation(text="ok", tokens_in=0, tokens_out=0)).cost is None


def test_a_body_with_no_answer_yet_is_deferred():
    request = GenerateRequest(prompt="another")
    with pytest.raises(Deferred) as deferred:
        batch_reply(_Backend(), RATES, request, {})  # type: ignore[arg-type]
    assert deferred.value.body == _Api().body(request)


class _CountingApi(_Api):
    def __init__(self) -> None:
        self.built = 0

    def body(self, request: GenerateRequest) -> dict[str, Any]:
        self.built += 1
        return {**super().body(request), "history": list(request.history)}


def test_a_lines_body_is_built_once_when_deferred_not_again_for_its_answer():
    """Building a body is litellm's whole request transformation (~16 ms a line): the pass
    that reads the answer finds the body's hash by the request, without building it; any
    other request (here a re-ask, with its history) is built."""
    api = _CountingApi()
    backend = type("B", (), {"spec": "litellm:openai/m", "batch_api": lambda self: api})()
    request = GenerateRequest(prompt="a cube")
    with pytest.raises(Deferred) as deferred:
        batch_reply(backend, RATES, request, {})
    answers = {deferred.value.sha: Answer(Generation(text="ok", tokens_in=10, tokens_out=2), None)}
    again = GenerateRequest(prompt="a cube")  # the same request, made again by the next pass
    assert batch_reply(backend, RATES, again, answers).text == "ok"
    assert api.built == 1
    reask = GenerateRequest(prompt="a cube", history=(("assistant", "bad"), ("user", "again")))
    with pytest.raises(Deferred):
        batch_reply(backend, RATES, reask, answers)
    assert api.built == 2


def test_repeated_samples_with_one_body_are_distinct_lines():
    """k samples of one request (`sample` 0..k-1) where the provider takes no seed have one
    body: each is its own line, so each gets its own answer, as online (one line would hand
    every sample the first one's answer)."""
    shas = []
    for sample in range(3):
        with pytest.raises(Deferred) as deferred:
            batch_reply(_Backend(), RATES, GenerateRequest(prompt="a cube", sample=sample), {})
        assert deferred.value.body == _Api().body(GenerateRequest(prompt="a cube"))
        shas.append(deferred.value.sha)
    assert len(set(shas)) == 3
    assert shas[0] == body_hash(_Api().body(GenerateRequest(prompt="a cube")))  # as before
