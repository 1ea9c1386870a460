"""What every judge produces for one item (`JudgeOutcome`: a score, or a failure with its
reason), what the describer produced (`Described`) and what a judge is given (`JudgeInput`). Kept low, below the judges that fill
them in, so records, metrics and reports read them without importing a judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from titjudge.records.calls import CallResult, sum_costs
from titjudge.records.image_input import ImageInput
from titjudge.records.items import Item

Status = Literal["ok", "failed", "fallback"]
#: ok: a description; failed: none, `error` says why; skipped: none asked for, because no
#: judge of the run reads descriptions
DescribedStatus = Literal["ok", "failed", "skipped"]


@dataclass
class Described:
    """The describer's output for one item (or why there is none). Without an explicit
    `status`, a text means ok and no text means failed."""

    text: str | None
    call: CallResult[str] | None = None
    error: str | None = None
    status: DescribedStatus | None = None

    def __post_init__(self) -> None:
        if self.status is None:
            self.status = "ok" if self.text is not None else "failed"

    @classmethod
    def skipped(cls) -> Described:
        return cls(text=None, error="not needed: no judge reads descriptions", status="skipped")

    @property
    def failed(self) -> bool:
        return self.status == "failed"


@dataclass(frozen=True)
class JudgeInput:
    """What a judge scores: the item, its image (None when it could not be read), the
    describer's output and, for a repeated judge, the sample (sample k is the request with
    `GenerateRequest.sample = k`: its own cache key and seed; sample 0 is the request a
    non-repeated run sends)."""

    item: Item
    image: ImageInput | None
    described: Described
    sample: int = 0

    def missing(self, *, needs_description: bool) -> str | None:
        """Why a judge cannot score this item: no description for a judge that reads one, no
        image for one that looks at it; None when it can."""
        if needs_description:
            if self.described.text is None:
                return f"no description: {self.described.error}"
        elif self.image is None:
            return "image could not be read"
        return None

    @property
    def description(self) -> str:
        """The description, for a judge that reads one (`Judge.judge` gives it no item
        without)."""
        if self.described.text is None:
            raise ValueError(f"item {self.item.item_id} has no description")
        return self.described.text

    @property
    def picture(self) -> ImageInput:
        """The image, for a judge that looks at it (`Judge.judge` gives it no item without)."""
        if self.image is None:
            raise ValueError(f"item {self.item.item_id} has no readable image")
        return self.image


@dataclass
class JudgeOutcome:
    """One (item, variant) record. `score` is None exactly when status is 'failed'."""

    variant: str
    status: Status
    score: float | None = None
    rationale: str | None = None
    raw: str | None = None
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    cached: bool = False
    #: model calls whose usage this record holds (its cost is unknown if any one's price is)
    calls: int = 0
    #: the models that answered those calls, as their replies say (`models.calls.provenance`)
    answered_by: list[str] = field(default_factory=list)

    @classmethod
    def failed(cls, variant: str, error: str, call: CallResult[Any] | None = None) -> JudgeOutcome:
        outcome = cls(variant=variant, status="failed", error=error)
        if call is not None:
            outcome.take_usage(call)
            outcome.raw = call.raw
        return outcome

    def take_usage(self, call: CallResult[Any]) -> None:
        self.tokens_in += call.tokens_in
        self.tokens_out += call.tokens_out
        self.add_cost(call.cost)
        self.latency += call.latency
        self.cached = call.cached
        self.note_model(call.answered_by)

    def note_model(self, answered_by: str | None) -> None:
        """Record one more model that answered a call of this outcome (each name once)."""
        if answered_by and answered_by not in self.answered_by:
            self.answered_by.append(answered_by)

    def add_cost(self, cost: float | None) -> None:
        """Add one call's cost; one unpriced call makes the total unknown (see `sum_costs`)."""
        self.cost = cost if self.calls == 0 else sum_costs((self.cost, cost))
        self.calls += 1
