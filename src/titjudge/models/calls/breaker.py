"""A circuit breaker per model client: a model whose endpoint refuses everything is stopped.

A request that fails for a reason that will not heal within the run (the backend marks it
`lasting`: connection refused, DNS lookup or TLS handshake failed, 401, 403, 404 model not
found, a missing client package, quota exhausted) counts; a success resets the count; other
failures (429, 5xx, timeouts, a bad reply, a request too long) neither count nor reset it, so
ordinary transient trouble never trips it. After `stop_after` such requests in a row (run
config `run.stop_after`; a spent quota trips it at once, as before) the model is stopped for
the run: every call still waiting, and every retry of a call in flight, fails at once with a
failure record naming the reason, and nothing more is sent to it. The run finishes what does
not need that model. Failures are never cached, so a re-run asks again.

Requests count, not calls: a call that meets a refused connection is retried (a server may be
starting), and each of its attempts counts, so the retries of the first calls do not multiply
what a dead endpoint costs: at most `stop_after` + concurrency requests are sent to it (the
requests already in flight when it trips), instead of `max_attempts` per item. A call sleeping
before its next retry wakes when the breaker trips.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from titjudge.models.core.base import PermanentError, QuotaExhaustedError
from titjudge.models.core.options import DEFAULT_STOP_AFTER

log = logging.getLogger(__name__)

NOT_SENT = "not sent"


class StoppedError(PermanentError):
    """A call refused without sending because its model was stopped for the run."""


class Breaker:
    """The breaker of one model client (see the module docstring). `stop_after` 0: never trips
    (a spent quota still stops the model)."""

    def __init__(self, model: str, stop_after: int = DEFAULT_STOP_AFTER):
        self.model = model
        self.stop_after = stop_after
        #: requests in a row that failed for a lasting reason, since the last success
        self.streak = 0
        #: why the model was stopped (the lasting reason), None while it runs
        self.reason: str | None = None
        #: the first full error text of the streak that stopped it
        self.example: str | None = None
        self._tripped: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def stopped(self) -> bool:
        return self.reason is not None

    def succeeded(self) -> None:
        self.streak = 0

    def failed(self, exc: BaseException) -> None:
        """Count a failed request; trip when the count reaches `stop_after`."""
        lasting = getattr(exc, "lasting", None)
        if lasting is None or self.stopped:
            return
        self.streak += 1
        if self.streak == 1:
            self.example = str(exc)
        quota = isinstance(exc, QuotaExhaustedError)
        if quota or (self.stop_after and self.streak >= self.stop_after):
            self._trip(str(lasting))

    def _trip(self, reason: str) -> None:
        self.reason = reason
        log.warning(
            "%s stopped: %d request%s in a row failed with %s. No further requests go to this "
            "model in this run (its other calls fail without being sent); everything already "
            "answered is kept, and a re-run tries again",
            self.model,
            self.streak,
            "" if self.streak == 1 else "s",
            reason,
        )
        if self._tripped is not None:
            self._tripped.set()

    def check(self) -> None:
        """Raise `StoppedError` when the model is stopped."""
        if self.reason is not None:
            raise StoppedError(
                f"{NOT_SENT}: {self.model} was stopped for this run after {self.streak} "
                f"request{'' if self.streak == 1 else 's'} in a row failed with {self.reason}; "
                "a re-run tries again",
                lasting=self.reason,
            )

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` before a retry, or less if the breaker trips meanwhile."""
        if self.stopped or seconds <= 0:
            return
        loop = asyncio.get_running_loop()
        if self._tripped is None or self._loop is not loop:
            self._tripped, self._loop = asyncio.Event(), loop
        with contextlib.suppress(asyncio.TimeoutError):  # the builtin one only from 3.11
            await asyncio.wait_for(self._tripped.wait(), seconds)


__all__ = ["NOT_SENT", "Breaker", "StoppedError"]
