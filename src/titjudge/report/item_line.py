"""Building items.jsonl's lines (`records.item_line.ItemLine`) from a run's item results:
items in the order given, each item's variants in its outcome order, the describer's part
on each line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from titjudge.records import ItemResult
from titjudge.records.item_line import DescriberLine, ItemLine, finite_or_none


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


__all__ = ["describer_line", "item_lines"]
