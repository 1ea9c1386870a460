"""A run's hard budget (`run.budget_usd`): a ledger beside the limiter, shared by every model
and role of the run (and by every row of an ablation grid).

Each attempt of a priced call reserves its worst case before it waits for a limiter slot: its
input estimate (`token_estimate`, the estimator `tpm` pacing and `titjudge estimate` use) plus
its whole output and thinking caps, at the model's rates (`models.core.prices.rates_for`: its
`price` option, else litellm's map). Once answered it settles to what the reply says it cost;
to the worst case when that is unknown (no reply, as after a timeout, or a reply litellm could
not price); to $0 when the provider refused it before any token (`is_unbilled`). So spent plus
reserved never exceeds the budget, however many calls are in flight, as far as the input
estimate holds (one token per 3.5 characters, on the safe side for English).

A call the budget cannot cover now waits, in arrival order, while calls in flight still hold
reservations (they usually settle below their worst case and free room); once nothing is in
flight and it still cannot be covered, the budget is spent: that call and every later priced
call is refused without being sent (`OverBudgetError`), and the run finishes with what it has.
A call that costs nothing (a local model, a `price` of 0) is never refused.

Each refusal is counted by what the call was made for (`GenerateRequest.made_for`: an item's
description or score, or a pairwise verdict), so a run stopped among its pairs says so, not
`0 items left undone`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any

from titjudge.models.core.base import MadeFor, PermanentError, mark_unbilled

#: how a call the budget refused starts its failure record
NOT_SENT_BUDGET = "not sent: budget"


class OverBudgetError(PermanentError):
    """A call refused without sending: the run's budget cannot cover its worst case."""

    def __init__(self, budget: Budget):
        super().__init__(
            f"{NOT_SENT_BUDGET} (run.budget_usd ${budget.usd:g} cannot cover its worst case; "
            "re-run with a larger budget to send it)"
        )
        mark_unbilled(self)


@dataclass
class BudgetState:
    """What the ledger holds at one moment (a run on a shared ledger reports a difference)."""

    spent: float = 0.0
    #: calls refused without being sent
    refused: int = 0
    #: of `refused`, the calls made for pairwise verdicts (the rest were items')
    refused_pairs: int = 0

    def since(self, before: BudgetState) -> BudgetState:
        return BudgetState(
            self.spent - before.spent,
            self.refused - before.refused,
            self.refused_pairs - before.refused_pairs,
        )

    def counts(self, prefix: str = "") -> dict[str, int]:
        """The calls not sent, in all and by what they were made for (summary.json's keys)."""
        return {
            f"{prefix}calls_not_sent": self.refused,
            f"{prefix}item_calls_not_sent": self.refused - self.refused_pairs,
            f"{prefix}pair_calls_not_sent": self.refused_pairs,
        }


class Budget:
    """The ledger (see the module docstring); used from the run's event loop only."""

    def __init__(self, usd: float):
        self.usd = float(usd)
        self.spent = 0.0
        self.reserved = 0.0
        #: reservations not settled yet (a count: a float sum of them does not come back to 0)
        self.holding = 0
        #: set once a call could not be covered with nothing in flight: priced calls are refused
        self.stopped = False
        self.refused = 0
        #: of `refused`, calls made for pairwise verdicts
        self.refused_pairs = 0
        #: the highest spent + reserved seen (never above `usd` while the estimate holds)
        self.peak = 0.0
        self._waiting: deque[tuple[asyncio.Future[bool], float]] = deque()

    def left(self) -> float:
        return self.usd - self.spent - self.reserved

    def state(self) -> BudgetState:
        return BudgetState(self.spent, self.refused, self.refused_pairs)

    async def reserve(self, worst: float, *, made_for: MadeFor) -> float:
        """Reserve `worst` dollars for one attempt of a call made for `made_for` (returned, to
        `settle` later); waits while calls in flight may free room; raises `OverBudgetError`
        once the budget is spent."""
        if worst <= 0:
            return 0.0
        if not self._waiting and not self.stopped and self._covers(worst):
            self._take(worst)
            return worst
        if self.stopped or self.holding == 0:  # nothing in flight can free room
            raise self._refuse(made_for)
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((waiter, worst))
        try:
            granted = await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.result():
                self.settle(worst, 0.0)  # granted, then cancelled: nothing was sent
            raise
        if not granted:
            raise self._refuse(made_for)
        return worst

    def hold(self, worst: float, *, made_for: MadeFor) -> bool:
        """Reserve `worst` now or never (a batch line, `models.calls.batch.collect`: a job's lines
        are sent together, so none waits for room): False, and the budget is spent, when it
        cannot be covered."""
        if worst <= 0:
            return True
        if self.stopped or not self._covers(worst):
            self._refuse(made_for)
            return False
        self._take(worst)
        return True

    def settle(self, reserved: float, cost: float) -> None:
        """An attempt that reserved `reserved` is done and cost `cost`."""
        if reserved > 0:
            self.reserved = max(0.0, self.reserved - reserved)
            self.holding -= 1
            if self.holding == 0:
                self.reserved = 0.0
        self.spent += max(cost, 0.0)
        self.peak = max(self.peak, self.spent + self.reserved)
        self._wake()

    def to_json(self, since: BudgetState | None = None) -> dict[str, Any]:
        """The budget, what was spent (of the whole ledger, and `since` a state), what is left,
        and the calls not sent, by what they were made for (`BudgetState.counts`)."""
        found: dict[str, Any] = {
            "usd": self.usd,
            "spent_usd": round(self.spent, 6),
            "left_usd": round(max(self.usd - self.spent, 0.0), 6),
            "stopped": self.stopped,
            **self.state().counts(),
        }
        if since is not None:
            delta = self.state().since(since)
            found["run_spent_usd"] = round(delta.spent, 6)
            found.update(delta.counts("run_"))
        return found

    def _covers(self, worst: float) -> bool:
        return self.spent + self.reserved + worst <= self.usd

    def _take(self, worst: float) -> None:
        self.reserved += worst
        self.holding += 1
        self.peak = max(self.peak, self.spent + self.reserved)

    def _refuse(self, made_for: MadeFor) -> OverBudgetError:
        self.stopped = True
        self.refused += 1
        self.refused_pairs += made_for == "pair"
        return OverBudgetError(self)

    def _wake(self) -> None:
        """Grant the calls waiting in line, in order, as far as the budget covers them; when
        the first cannot be covered with nothing in flight, the budget is spent."""
        while self._waiting:
            waiter, worst = self._waiting[0]
            if waiter.done():
                self._waiting.popleft()
            elif not self.stopped and self._covers(worst):
                self._waiting.popleft()
                self._take(worst)
                waiter.set_result(True)
            elif self.stopped or self.holding == 0:
                self.stopped = True
                self._waiting.popleft()
                waiter.set_result(False)
            else:
                return


__all__ = ["NOT_SENT_BUDGET", "Budget", "BudgetState", "OverBudgetError"]
