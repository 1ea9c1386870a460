"""The send of one request (`models.calls.sending.Sender`), apart from the cache and the call
kinds above it: transient errors are retried and counted, a permanent one is not, the
failure record counts the attempts and carries no secret, and a model whose breaker stopped
it sends nothing more. The same behaviours through a real HTTP server and litellm are in
test_call_layer.py; here the sender is driven by a scripted send, so each rule is seen alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from titjudge.models.calls.breaker import StoppedError
from titjudge.models.calls.limits import Limiter
from titjudge.models.calls.sending import Sender
from titjudge.models.core.base import PermanentError, TransientError
from titjudge.models.core.options import ModelOptions
from titjudge.records.spec import parse_model_spec


class Backend:
    """What the sender reads of a backend: its spec, readiness and error mapping."""

    spec = parse_model_spec("litellm:openai/gpt-4o-mini")

    async def ready(self) -> None:
        return None

    def classify_error(self, exc: Exception) -> Exception:
        return exc


def sender(**options: Any) -> Sender:
    opts = ModelOptions(**{"backoff_initial": 0.0, "backoff_max": 0.0, **options})
    return Sender(Backend(), Limiter(concurrency=2), opts, stop_after=2)  # type: ignore[arg-type]


def scripted(*outcomes: Any) -> tuple[Any, list[int]]:
    """A send answering `outcomes` in turn (an exception is raised), and its call count."""
    calls: list[int] = []

    async def send() -> Any:
        calls.append(1)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return send, calls


def test_transient_errors_are_retried_and_the_attempts_counted() -> None:
    send, calls = scripted(TransientError("503"), TransientError("502"), "answer")
    done = asyncio.run(sender(max_attempts=4).attempt(send))
    assert done.value == "answer" and done.attempts == 3 and len(calls) == 3


def test_a_permanent_error_is_sent_once_and_its_record_counts_one_attempt() -> None:
    s = sender(max_attempts=4)
    send, calls = scripted(PermanentError("400 Invalid value for 'messages'"), "never")
    with pytest.raises(PermanentError) as raised:
        asyncio.run(s.attempt(send))
    assert len(calls) == 1
    record = s.failure(raised.value)
    assert not record.ok and record.attempts == 1
    assert record.error == "400 Invalid value for 'messages'"


def test_giving_up_names_the_attempts_and_redacts_a_key_in_the_error() -> None:
    s = sender(max_attempts=2)
    leak = TransientError("503 from https://host/v1?key=AIzaSECRETSECRET123")
    send, calls = scripted(leak, leak)
    with pytest.raises(TransientError) as raised:
        asyncio.run(s.attempt(send))
    record = s.failure(raised.value)
    assert len(calls) == 2 and record.attempts == 2
    assert record.error is not None and record.error.startswith("gave up after 2 attempts")
    assert "AIzaSECRETSECRET123" not in record.error


def test_a_stopped_model_sends_nothing_more() -> None:
    s = sender(max_attempts=1)
    for _ in range(2):  # stop_after=2 lasting refusals in a row stop the model
        refusal = PermanentError("401 Incorrect API key provided", lasting="invalid API key")
        send, _ = scripted(refusal)
        with pytest.raises(PermanentError):
            asyncio.run(s.attempt(send))
    send, calls = scripted("never")
    with pytest.raises((StoppedError, PermanentError)):
        asyncio.run(s.attempt(send))
    assert calls == []
