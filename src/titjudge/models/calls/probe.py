"""Calls answered from the cache alone (a `CacheProbe`): a cached re-run's first pass
(`agents.cached`), the estimate (`calls.estimate_probe`) and the batch phase (`calls.batch.collect`)
run a run's own steps with one; a miss sends nothing and claims nothing.

The probe is the call's mode (`models.core.clients.CallMode`), passed explicitly and always: the
run context holds it (`agents.item.RunContext.probe`), each step hands it to the judges and the
describer, and they to every client call (`probe=`, a required keyword); a run's ordinary mode
(answer, computing and sending the misses) is spelt `SEND`, never left to a default.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from titjudge.models.calls.batch_answers import Answer
from titjudge.records.calls import CallResult, Usage

#: one computed answer: its result and what the cache keeps of it (None: nothing)
Computed = tuple[CallResult[Any], Any]
#: a batch job's answers by line, which a computation reads instead of sending (None: send)
Answers = dict[str, Answer]
#: computes the answer of one position of a call, from `Answers` where given
ComputeOne = Callable[[Answers | None], Awaitable[list[Computed]]]


class CacheProbe:
    """Calls made with a probe are answered from the cache alone: a call whose
    answer is not there sends nothing and claims nothing, returns a failure, and marks the
    probe `missed`. What the calls answered counts in their models' ledgers only once the
    caller `commit()`s (it keeps the results), so a probe that missed counts nothing."""

    NOT_CACHED = "not in the cache (answered from the cache only)"
    #: whether a call's images are read and fitted to key it, as its send would: a probe
    #: whose misses are sent later (a batch job's lines) must key them as they will go
    fits = False

    def __init__(self) -> None:
        self.missed = False
        self._counted: list[tuple[Usage, list[CallResult[Any]]]] = []
        self._after: list[Callable[[], Any]] = []

    def count(
        self, ledger: Usage, results: list[CallResult[Any]], *, model: str = "", role: str = ""
    ) -> None:
        """The answers of one call of `model` in `role` (counted once committed)."""
        self._counted.append((ledger, results))

    def note(self, key: str, request: Any) -> None:
        """What the call under `key` would send (a probe that estimates it reads this)."""

    def holds(self, client: Any) -> bool:
        """Whether `client`'s calls answer from the cache alone here (True: every client's);
        a client not held is called as usual, and what it computes is handed to the run's
        later call for the same key (`CallPipeline.answers`), counted there once."""
        return True

    def miss(self, client: Any, key: str, compute: ComputeOne | None = None) -> CallResult[Any]:
        """The result of a call whose answer is not cached: nothing is sent, it fails.
        `compute` computes it (a batch collector runs it later, `models.calls.batch.collect`)."""
        self.missed = True
        return CallResult(ok=False, error=CacheProbe.NOT_CACHED, attempts=0)

    def on_commit(self, action: Callable[[], Any]) -> None:
        """Run `action` once the answers are committed (never if they are not)."""
        self._after.append(action)

    def commit(self) -> None:
        for ledger, results in self._counted:
            for result in results:
                ledger.add(result)
        self._counted.clear()
        for action in self._after:
            action()
        self._after.clear()


__all__ = ["Answers", "CacheProbe", "ComputeOne", "Computed"]
