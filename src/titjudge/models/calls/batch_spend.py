"""`run.budget_usd` over a model's batch lines (`models.calls.batch.collect`): each line's worst case
is reserved before the line goes into a job, and settles to what the calls that read its
answer cost."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from titjudge.models.calls.budget import Budget, OverBudgetError
from titjudge.models.core.base import MadeFor
from titjudge.models.core.prices import batch_rates_for
from titjudge.records.calls import CallResult
from titjudge.records.spec import ModelSpec


def line_worst(
    budget: Budget | None, spec: ModelSpec, price: Any, tokens_in: int, tokens_out: int
) -> float:
    """A batch line's worst case under the run's budget: `tokens_in` (the input estimate)
    and `tokens_out` (the whole output and thinking caps) at the model's batch rates; 0
    without a budget."""
    if budget is None:
        return 0.0
    rates = batch_rates_for(spec, price)
    if rates is None:  # the config refuses an unpriced model under a budget: never sent
        return math.inf
    return rates.cost(tokens_in, tokens_out)


@dataclass
class Wanted:
    """A body to send as a batch line: its worst case at the batch price, and the cache keys
    waiting on it."""

    body: dict[str, Any]
    worst: float
    #: what its calls are made for: the budget counts its refusal by it
    made_for: MadeFor
    keys: list[str] = field(default_factory=list)


class BatchSpend:
    """`run.budget_usd` over one model's batch lines: each line's worst case is reserved
    before it goes into a job (a line the budget cannot cover is not sent: the calls waiting
    on it fail as refused by the budget, as online calls would), and settles to what the
    calls that read its answer cost (two rounds of a re-asked call settle together)."""

    def __init__(self, budget: Budget | None):
        self.budget = budget
        #: body hash -> its reservation
        self.held: dict[str, float] = {}
        #: cache key -> the bodies it was deferred on
        self.shas: dict[str, list[str]] = {}
        #: body hash -> the budget's refusal
        self.refused: dict[str, str] = {}

    def asked(self, key: str, sha: str) -> None:
        self.shas.setdefault(key, []).append(sha)

    def cover(self, wanted: dict[str, Wanted]) -> dict[str, Wanted]:
        """The bodies the budget covers, reserved in order; the rest are refused (their
        calls' answers say so) and every later one with them, as online."""
        if self.budget is None:
            return wanted
        covered: dict[str, Wanted] = {}
        for sha, want in wanted.items():
            if sha in self.refused:
                continue
            if sha in self.held:
                covered[sha] = want
            elif self.budget.hold(want.worst, made_for=want.made_for):
                self.held[sha] = max(want.worst, 0.0)
                covered[sha] = want
            else:
                self.refused[sha] = str(OverBudgetError(self.budget))
        return covered

    def answered(self, key: str, result: CallResult[Any]) -> None:
        """A call read its answer: its bodies' reservations settle to what it cost (a body
        sent by a killed run and resumed by this one was never reserved: its cost counts)."""
        if self.budget is None:
            return
        reserved = [self.held.pop(sha) for sha in self.shas.pop(key, []) if sha in self.held]
        cost = result.cost
        if cost is None:  # a reply nothing priced (refused under a budget): its worst case
            cost = sum(reserved) if result.ok else 0.0
        for held in reserved[1:]:
            self.budget.settle(held, 0.0)
        self.budget.settle(reserved[0] if reserved else 0.0, cost)

    def close(self) -> None:
        """Lines still reserved are in jobs left open (a re-run resumes them) or answered for
        calls that asked again: the provider may still charge them, so their worst case stays
        spent."""
        if self.budget is None:
            return
        for held in self.held.values():
            self.budget.settle(held, held)
        self.held.clear()


__all__ = ["BatchSpend", "Wanted", "line_worst"]
