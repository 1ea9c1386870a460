"""One line of a run's items.jsonl: what one variant produced for one item, with the
describer's part. The evaluator builds them from the item results (`item_lines`), the run
record holds them (`RunRecord.item_lines`), the run writes items.jsonl and scores.csv from
them, and every reader reads them back here (`read_item_lines`), so none of these disagree
on a field.

Reading is strict where a wrong value would change a number (ids, status, score, details)
and lenient where the audit only displays (a non-numeric cost is unknown, an absent
describer section is empty), so a hand-edited file still loads. Every problem is one
DataError naming `file:line`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_serializer
from pydantic.functional_serializers import SerializerFunctionWrapHandler

from titjudge.errors import where
from titjudge.files import iter_jsonl, parse_record
from titjudge.records.items import ScoreRow, ScoreStatus

if TYPE_CHECKING:
    from titjudge.records import ItemResult

_STATUSES: tuple[str, ...] = ("ok", "failed", "fallback")
#: describer fields written only when they say something (a finish reason other than
#: "stop", thinking tokens, a kept truncated reply, the model that answered, images fitted
#: to the provider's byte limit)
_ONLY_WHEN_SET = ("finish_reason", "thinking_tokens", "truncated", "answered_by", "image_fit")


def finite_or_none(value: Any) -> float | None:
    """A finite number as float, else None (costs and scores are never NaN in the views)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


class DescriberLine(BaseModel):
    """The describer's call for the item: status (ok, failed, or skipped when no judge reads
    descriptions), the reason when not ok, usage, and the model its reply says answered."""

    model_config = ConfigDict(extra="ignore")

    status: Literal["ok", "failed", "skipped"] = "ok"
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    cached: bool = False
    attempts: int = 0
    finish_reason: str | None = None
    thinking_tokens: int | None = None
    truncated: bool = False
    answered_by: str | None = None
    #: what was done to the image to fit the provider's byte limit (`records.images.fit_bytes`)
    image_fit: list[str] | None = None

    @field_validator("image_fit", mode="before")
    @classmethod
    def _notes(cls, value: Any) -> list[str] | None:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None

    @field_validator("error", "answered_by", mode="before")
    @classmethod
    def _text_or_none(cls, value: Any) -> str | None:
        return value if isinstance(value, str) else None

    @field_validator("cost", mode="before")
    @classmethod
    def _cost(cls, value: Any) -> float | None:
        return finite_or_none(value)

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if k not in _ONLY_WHEN_SET or v}


class ItemLine(BaseModel):
    """One (item, variant) line; `score` is null exactly when status is 'failed'."""

    model_config = ConfigDict(extra="ignore")

    item_id: str
    prompt_id: str
    t2i_model: str
    image: str = ""
    variant: str
    status: ScoreStatus
    score: float | None = None
    rationale: str | None = None
    error: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    raw: str | None = None
    description: str | None = None
    describer: DescriberLine = Field(default_factory=DescriberLine)
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    cached: bool = False
    #: the models that answered this variant's text calls, as their replies say (empty for a
    #: judge that calls none, or only an embedding model)
    answered_by: list[str] = Field(default_factory=list)

    @field_validator("item_id", "prompt_id", "t2i_model", "variant", mode="before")
    @classmethod
    def _nonempty(cls, value: Any, info: ValidationInfo) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"field '{info.field_name}' must be a non-empty string, got {value!r}")
        return value

    @field_validator("image", mode="before")
    @classmethod
    def _image(cls, value: Any) -> str:
        return value if isinstance(value, str) else ""

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> Any:
        if value not in _STATUSES:
            raise ValueError(f"status must be one of {', '.join(_STATUSES)}; got {value!r}")
        return value

    @field_validator("score", mode="before")
    @classmethod
    def _score_fits_status(cls, value: Any, info: ValidationInfo) -> float | None:
        status = info.data.get("status")
        if status == "failed":
            if value is not None:
                raise ValueError(f"status 'failed' must have score null, got {value!r}")
            return None
        if status is not None and finite_or_none(value) is None:
            raise ValueError(f"status {status!r} needs a finite number as score, got {value!r}")
        return value if value is None else float(value)

    @field_validator("rationale", "error", "raw", "description", mode="before")
    @classmethod
    def _text(cls, value: Any, info: ValidationInfo) -> str | None:
        if value is None or isinstance(value, str):
            return value
        raise ValueError(
            f"field '{info.field_name}' must be a string or null, got {type(value).__name__}"
        )

    @field_validator("details", mode="before")
    @classmethod
    def _details(cls, value: Any) -> dict[str, Any]:
        if not value:
            return {}
        if not isinstance(value, dict):
            raise ValueError(f"field 'details' must be an object, got {type(value).__name__}")
        return value

    @field_validator("describer", mode="before")
    @classmethod
    def _describer(cls, value: Any) -> Any:
        return value if isinstance(value, dict | DescriberLine) else {}

    @field_validator("tokens_in", "tokens_out", mode="before")
    @classmethod
    def _tokens(cls, value: Any) -> Any:
        return value or 0

    @field_validator("cost", mode="before")
    @classmethod
    def _cost(cls, value: Any) -> float | None:
        return finite_or_none(value)

    @field_validator("cached", mode="before")
    @classmethod
    def _cached(cls, value: Any) -> bool:
        return bool(value)

    @field_validator("answered_by", mode="before")
    @classmethod
    def _models(cls, value: Any) -> list[str]:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def score_row(self) -> ScoreRow:
        """This line's row of scores.csv (a failed line has no score)."""
        score = self.score if self.status != "failed" else None
        return ScoreRow(self.item_id, self.variant, score, self.status)

    @classmethod
    def parse(cls, obj: dict[str, Any], loc: str) -> ItemLine:
        """Validate one parsed line; a problem is one DataError at `loc` (file:line)."""
        return parse_record(cls, obj, loc)


def read_item_lines(path: Path) -> list[ItemLine]:
    """A run's items.jsonl as typed lines; a bad line is one DataError naming file:line."""
    return [ItemLine.parse(obj, where(path, n)) for n, obj in iter_jsonl(path, "run items file")]


def describer_line(result: ItemResult) -> DescriberLine:
    """The describer's part of an item's lines (our own values: built, not re-validated, and
    equal to the part items.jsonl reads back)."""
    described, call = result.described, result.described.call
    usage: dict[str, Any] = {}
    if call is not None:
        usage = {
            "tokens_in": call.tokens_in,
            "tokens_out": call.tokens_out,
            "cost": finite_or_none(call.cost),
            "latency": round(call.latency, 4),
            "cached": call.cached,
            "attempts": call.attempts,
            # the fields written only when they say something hold None otherwise, as
            # items.jsonl read back does (`DescriberLine`)
            "finish_reason": None if call.finish_reason == "stop" else call.finish_reason or None,
            "thinking_tokens": call.thinking_tokens or None,
            "truncated": call.truncated,
            "answered_by": call.answered_by or None,
            "image_fit": list(call.image_fit) if call.image_fit else None,
        }
    status = described.status or "failed"
    return DescriberLine.model_construct(
        status=status, error=described.error if status != "ok" else None, **usage
    )


def item_lines(results: Iterable[ItemResult]) -> Iterator[ItemLine]:
    """The lines of items.jsonl: items in the order given (a run's evaluator has ordered them
    by item id), each item's variants in its outcome order."""
    for result in results:
        item, describer = result.item, describer_line(result)
        for outcome in result.outcomes:
            yield ItemLine.model_construct(
                item_id=item.item_id,
                prompt_id=item.prompt_id,
                t2i_model=item.t2i_model,
                image=str(item.image),
                variant=outcome.variant,
                status=outcome.status,
                score=outcome.score,
                rationale=outcome.rationale,
                error=outcome.error,
                details=outcome.details,
                raw=outcome.raw,
                description=result.described.text,
                describer=describer,
                tokens_in=outcome.tokens_in,
                tokens_out=outcome.tokens_out,
                cost=finite_or_none(outcome.cost),
                latency=round(outcome.latency, 4),
                cached=outcome.cached,
                answered_by=list(outcome.answered_by),
            )


__all__ = [
    "DescriberLine",
    "ItemLine",
    "describer_line",
    "finite_or_none",
    "item_lines",
    "read_item_lines",
]
