"""What a pairwise judge produced in a run, as one type from the judge that makes it to every
view that reads it back: per pair, both presentation orders (`OrderVerdict`) and the pair's
verdict (`PairVerdict`); per judge, every pair (`PairwiseRun`).

A `PairVerdict` is one line of a run's pairs_<judge>.jsonl (`PairVerdict.line` writes it,
`PairVerdict.from_line` reads it back: `report.record.load_verdicts`), the entries of a run
record's `verdicts`, and what the metrics and the audit read. Kept low, below the judge that
fills them in (`titjudge.judges.pairwise`), so metrics and reports read them without
importing a judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from titjudge.records.items import Winner

Choice = Literal["first", "second", "tie"]


class OrderVerdict(BaseModel):
    """One presentation order of a pair: its (median) choice, every sample, and usage."""

    model_config = ConfigDict(extra="ignore")

    first: str
    second: str
    choice: Choice | None = None
    samples: list[Choice | None] = Field(default_factory=list)
    rationale: str | None = None
    error: str | None = None
    raw: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    cached: bool = True
    #: the models whose replies gave this order's samples (`models.calls.provenance`)
    answered_by: list[str] = Field(default_factory=list)

    def winner(self, sample: int | None = None) -> str | None:
        """Item id chosen, 'tie', or None when this order (or sample) failed."""
        choice = (
            self.choice
            if sample is None
            else (self.samples[sample] if sample < len(self.samples) else None)
        )
        if choice is None:
            return None
        return {"first": self.first, "second": self.second, "tie": "tie"}[choice]


class PairVerdict(BaseModel):
    """A pairwise judge's verdict on one pair: both orders (`forward` shows item_a first,
    `backward` item_b) and the human's preference (None: no human judged it)."""

    model_config = ConfigDict(extra="ignore")

    prompt_id: str
    item_a: str
    item_b: str
    human: Winner | None = None
    forward: OrderVerdict
    backward: OrderVerdict

    def verdict_of(self, sample: int | None = None) -> Literal["a", "b", "tie"] | None:
        """'a'/'b' when both orders chose that image, 'tie' otherwise (the orders disagreed
        or both tied), None when an order failed; `sample`: one repeat's choices alone."""
        one, two = self.forward.winner(sample), self.backward.winner(sample)
        if one is None or two is None:
            return None
        if one == two and one != "tie":
            return "a" if one == self.item_a else "b"
        return "tie"

    @property
    def verdict(self) -> Literal["a", "b", "tie"] | None:
        """The pair's verdict from each order's median choice (`verdict_of`)."""
        return self.verdict_of()

    @property
    def orders(self) -> tuple[OrderVerdict, OrderVerdict]:
        return self.forward, self.backward

    @property
    def orders_agree(self) -> bool | None:
        """Whether both orders picked the same image (or both tied); None if one failed."""
        one, two = self.forward.winner(), self.backward.winner()
        return None if one is None or two is None else one == two

    @property
    def pair_id(self) -> str:
        return f"{self.item_a}|{self.item_b}"

    def line(self) -> dict[str, Any]:
        """One line of pairs_<judge>.jsonl: the pair, its verdict, whether it matches the
        human's (None: no human preference or a tie, or no verdict) and both orders."""
        verdict = self.verdict
        correct = None if verdict is None or self.human in (None, "tie") else verdict == self.human
        return {
            "prompt_id": self.prompt_id,
            "item_a": self.item_a,
            "item_b": self.item_b,
            "human": self.human,
            "verdict": verdict,
            "correct": correct,
            "status": "failed" if verdict is None else "ok",
            "orders": [order.model_dump(mode="json") for order in self.orders],
        }

    @classmethod
    def from_line(cls, obj: dict[str, Any]) -> PairVerdict:
        """A pairs_<judge>.jsonl line back into the verdict it was written from (the
        written `verdict`, `correct` and `status` follow from the orders); a line that is not
        one raises ValueError (pydantic's ValidationError for a bad field)."""
        orders = obj.get("orders")
        if not isinstance(orders, list) or len(orders) != 2:
            raise ValueError("orders: must list the pair's two presentation orders")
        forward, backward = orders
        return cls.model_validate({**obj, "forward": forward, "backward": backward})


@dataclass
class PairwiseRun:
    """Everything one pairwise judge produced in a run."""

    judge: str
    repeats: int
    judgements: list[PairVerdict]
    #: a jury's fit (`judges.jury`: its folds, their prompts and weights); None otherwise
    fit: dict[str, Any] | None = None

    def in_order(self) -> list[PairVerdict]:
        """The verdicts in (prompt, item_a, item_b) order: pairs_<judge>.jsonl's, and the
        run record's (`RunRecord.verdicts`)."""
        return sorted(self.judgements, key=lambda j: (j.prompt_id, j.item_a, j.item_b))
