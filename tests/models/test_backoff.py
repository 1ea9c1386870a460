"""The wait between attempts: exponential from backoff_initial, jittered, capped at backoff_max,
and a provider's Retry-After taken as told (capped too). titjudge computes it itself, so no
tenacity release changes it."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from titjudge.models.calls.sending import Sender
from titjudge.models.core.base import TransientError


def _wait(attempt: int, exc: BaseException | None = None, **options: Any) -> float:
    pipeline: Any = Sender.__new__(Sender)
    pipeline.options = SimpleNamespace(**{"backoff_initial": 0.5, "backoff_max": 10.0, **options})
    outcome = SimpleNamespace(exception=lambda: exc)
    state: Any = SimpleNamespace(attempt_number=attempt, outcome=outcome)
    return pipeline._wait(state)


def test_backoff_doubles_from_initial_with_jitter_below_initial() -> None:
    random.seed(3)
    for attempt, base in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0)):
        waits = [_wait(attempt, TransientError("503")) for _ in range(200)]
        assert base <= min(waits) and max(waits) <= base + 0.5, (attempt, min(waits), max(waits))
        assert max(waits) - min(waits) > 0.25  # jittered, not a fixed schedule


def test_backoff_is_capped_at_backoff_max() -> None:
    assert _wait(12, TransientError("503")) == 10.0
    assert _wait(3, TransientError("503"), backoff_max=1.5) == 1.5


def test_retry_after_is_taken_as_told_within_the_cap() -> None:
    assert _wait(1, TransientError("429", retry_after=7.0)) == 7.0
    assert _wait(1, TransientError("429", retry_after=70.0)) == 10.0
    assert _wait(5, TransientError("429", retry_after=0.0)) == 0.0
