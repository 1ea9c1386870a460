"""What a run already has for a call before the cache is asked.

- **A batch job's answer.** The batch phase (`models.calls.batch.collect`) hands each line's
  answer, or failure, to the client that asked; a probe whose client it does not hold hands
  over what it computed. A validated answer is also in the cache: it is handed over (and so
  counted, at the batch price) once, then the cache answers. A failure stays for the run:
  the batch gave no other answer.
- **A failure of this run.** A request that failed is not sent again in this run: every item
  that needs it shares the failure, as it would share an answer. A re-run (a new client)
  asks again: failures are never cached.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from titjudge.models.core.clients import SEND, CallMode
from titjudge.records.calls import CallResult


class RunAnswers:
    """One model client's batch answers (by cache key) and failures (by sharing key)."""

    def __init__(self) -> None:
        self.batch: dict[str, CallResult[Any]] = {}
        self.failed: dict[str, CallResult[Any]] = {}

    def find(self, key: str, shared: str, *, probe: CallMode) -> CallResult[Any] | None:
        """The answer this run has for cache key `key` / sharing key `shared`, or None. Under
        a probe, a batch answer is handed over only once the probe commits."""
        failed = self.failed.get(shared)
        if failed is not None:
            return dataclasses.replace(failed, cached=True)
        found = self.batch.get(key)
        if found is None:
            return None
        if found.ok:
            if probe is SEND:
                self.batch.pop(key, None)
            else:
                probe.on_commit(lambda: self.batch.pop(key, None))
        return found

    def keep_batch(self, key: str, result: CallResult[Any]) -> None:
        """A batch job's answer (or failure) for `key`, or what a probe computed for it."""
        self.batch[key] = result

    def keep_failure(self, shared: str, result: CallResult[Any]) -> None:
        """`result` failed: later calls of this run with its sharing key share it."""
        self.failed[shared] = result


__all__ = ["RunAnswers"]
