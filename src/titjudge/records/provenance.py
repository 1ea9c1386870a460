"""What a summary line says of which models answered a run (`provenance_lines`), and the
model-name rule's small pure helpers. Pure formatting of recorded facts, kept low so reports
read it without importing the models (`titjudge.models.calls.provenance` holds the rule and
the record it reads).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from titjudge.records.spec import parse_model_spec

#: a dated or numbered snapshot after the model's name
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{3})")


def _norm(name: str) -> str:
    name = name.strip().lower().split("@", 1)[0]
    return name.removeprefix("models/")


def _tails(model_id: str) -> list[str]:
    """The id and each tail after a '/': 'hosted_vllm/qwen/qwen3-8b', 'qwen/qwen3-8b', ..."""
    whole = _norm(model_id)
    parts = whole.split("/")
    return [whole, *("/".join(parts[i:]) for i in range(1, len(parts)) if parts[i])]


def model_id_of(configured: str) -> str:
    """The model id of a spec ('litellm:openai/gpt-4o' -> 'openai/gpt-4o'); a bare id as is."""
    try:
        return parse_model_spec(configured).model_id
    except ValueError:
        return configured


class ModelAnswers(BaseModel):
    """Which models answered one configured model's calls: an entry of `provenance`'s record
    (summary.json's `answered_by`, keyed by the configured model spec)."""

    #: calls per answering model, as the replies name it
    answered_by: dict[str, int] = Field(default_factory=dict)
    #: answers that record no model (cached before titjudge recorded it)
    unrecorded: int = 0
    #: the answering models that are not the configured one by the model-name rule
    other_models: list[str] = Field(default_factory=list)
    #: whether more than one model answered
    mixed: bool = False


def provenance_lines(
    record: Mapping[str, ModelAnswers | Mapping[str, Any]],
) -> list[tuple[str, bool]]:
    """What a summary line says of `provenance`'s record (its dicts, or read back typed):
    (line, is a warning) per model whose answers came from another model, from several,
    under another name than configured (a snapshot: both shown), or without a recorded
    model. A model that answered as itself under its configured name needs no line."""
    lines: list[tuple[str, bool]] = []
    for spec, found in record.items():
        if not isinstance(found, ModelAnswers | Mapping):
            continue
        entry = ModelAnswers.model_validate(found)
        answered = dict(entry.answered_by)
        others = list(entry.other_models)
        unrecorded = entry.unrecorded
        counted = ", ".join(f"{name} ({_calls(n)})" for name, n in answered.items())
        plain = {t for t in _tails(model_id_of(spec))}
        tail = f"; {_calls(unrecorded)} cached without a record of the model" if unrecorded else ""
        if others:
            which = ", ".join(others)
            lines.append(
                (
                    f"{spec}: answered by {counted}{tail}. NOT the configured model: {which} "
                    "(a re-routed or renamed model; set run.require_model: exact to refuse it)",
                    True,
                )
            )
        elif len(answered) > 1:
            lines.append(
                (
                    f"{spec}: answered by {len(answered)} models, {counted}{tail}: the run "
                    "mixes them (an alias that moved)",
                    True,
                )
            )
        elif answered and not {_norm(n) for n in answered} <= plain:
            lines.append((f"{spec}: answered by {counted} (its snapshot){tail}", False))
        elif unrecorded and not answered:
            lines.append(
                (
                    f"{spec}: {_calls(unrecorded)} answered from the cache without a record of "
                    "which model gave them (cached before titjudge recorded it)",
                    False,
                )
            )
        elif unrecorded:
            lines.append((f"{spec}: answered by {counted}{tail}", False))
    return lines


def _calls(n: int) -> str:
    return f"{n} call{'s' if n != 1 else ''}"
