"""What a pairwise judge produced in a run: per pair, both presentation orders
(`OrderJudgement`) and the pair's verdict (`PairJudgement`); per judge, every pair
(`PairwiseRun`). Kept low, below the judge that fills them in (`titjudge.judges.pairwise`), so
metrics and reports read them without importing a judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from titjudge.records.items import Winner

Choice = Literal["first", "second", "tie"]


@dataclass
class OrderJudgement:
    """One presentation order of a pair: its (median) choice, every sample, and usage."""

    first: str
    second: str
    choice: Choice | None = None
    samples: list[Choice | None] = field(default_factory=list)
    rationale: str | None = None
    error: str | None = None
    raw: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    cached: bool = True
    #: the models whose replies gave this order's samples (`models.calls.provenance`)
    answered_by: list[str] = field(default_factory=list)

    @classmethod
    def from_record(cls, obj: dict[str, Any]) -> OrderJudgement:
        """One `orders` entry of a pairs_<judge>.jsonl line (as `vars` wrote it)."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in obj.items() if k in known})

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


@dataclass
class PairJudgement:
    prompt_id: str
    item_a: str
    item_b: str
    human: Winner | None
    forward: OrderJudgement  # item_a shown first
    backward: OrderJudgement  # item_b shown first

    def verdict(self, sample: int | None = None) -> Literal["a", "b", "tie"] | None:
        """'a'/'b' when both orders chose that image, 'tie' otherwise, None when an order failed."""
        one, two = self.forward.winner(sample), self.backward.winner(sample)
        if one is None or two is None:
            return None
        if one == two and one != "tie":
            return "a" if one == self.item_a else "b"
        return "tie"

    def record(self) -> dict[str, Any]:
        """One line of pairs_<judge>.jsonl."""
        verdict = self.verdict()
        correct = None if verdict is None or self.human in (None, "tie") else verdict == self.human
        return {
            "prompt_id": self.prompt_id,
            "item_a": self.item_a,
            "item_b": self.item_b,
            "human": self.human,
            "verdict": verdict,
            "correct": correct,
            "status": "failed" if verdict is None else "ok",
            "orders": [vars(order) for order in (self.forward, self.backward)],
        }

    @classmethod
    def from_record(cls, obj: dict[str, Any]) -> PairJudgement:
        """A pairs_<judge>.jsonl line back into the judgement it was written from."""
        forward, backward = obj["orders"]
        return cls(
            str(obj["prompt_id"]),
            str(obj["item_a"]),
            str(obj["item_b"]),
            obj.get("human"),
            OrderJudgement.from_record(forward),
            OrderJudgement.from_record(backward),
        )


@dataclass
class PairwiseRun:
    """Everything one pairwise judge produced in a run."""

    judge: str
    repeats: int
    judgements: list[PairJudgement]
