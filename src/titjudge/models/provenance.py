"""Which model answered: what each reply says, against the model the config names.

A provider may answer with another model than the one asked for: Google's Gemini API routes
requests for a retired model (gemini-2.5-pro, from 1 December 2026) to its successor, billed at
the successor's rates, and an alias such as OpenAI's `gpt-4o` moves to newer snapshots. Every
text call therefore keeps the model its reply names (`CallResult.answered_by`: an
OpenAI-compatible body's `model`, Gemini's `modelVersion`); local backends (`hf:`, `replay:`)
answer as themselves. The run counts calls per answering model (`Usage.answered_by`), and
`provenance` compares them with the configured model.

The rule (`same_model`): a reply is from the configured model when the name it gives, with a
leading `models/` and an `@version` suffix dropped and case ignored, is the configured model
id or a tail of it after a `/` (a provider prefix such as `openai/` or `hosted_vllm/`, an
organisation such as `Qwen/`), or such a name followed by a dated or numbered snapshot suffix
(`-2024-08-06`, `-20240620`, `-0613`, `-001`): `gpt-4o-2024-08-06` answers for `gpt-4o`,
`gemini-2.5-pro` for `gemini/gemini-2.5-pro`, `Qwen/Qwen3-8B` for `hosted_vllm/Qwen/Qwen3-8B`.
Anything else is another model (`gemini-3-pro-preview`, `gemini-2.5-pro-preview-06-05`,
`gpt-4o-mini`). Both names are shown either way. An alias that moves between two snapshots
of the configured model is not "another model", but a run answered by both says so (mixed).
To pin one snapshot, configure its dated id.

`run.require_model`: `report` (the default) records and reports; `exact` makes a reply from
another model, or one that does not say which model gave it, a failure record naming both
(never cached), and asks again for a cached answer recorded from another model. An answer
cached before titjudge recorded the model is kept and counted as unrecorded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from titjudge.models.results import Usage
from titjudge.models.spec import parse_model_spec

RequireModel = Literal["report", "exact"]

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


def same_model(configured: str, answered: str) -> bool:
    """Whether `answered` (a reply's model name) is the configured model (a spec or a model
    id) by the module's rule: the name, a tail of it, or either with a snapshot suffix."""
    said = _norm(answered)
    for tail in _tails(model_id_of(configured)):
        if said == tail:
            return True
        if said.startswith(tail) and _SNAPSHOT.fullmatch(said[len(tail) :]):
            return True
    return False


def refusal(configured: str, answered: str | None, *, cached: bool = False) -> str | None:
    """Why `run.require_model: exact` refuses this reply (None: it does not). A cached answer
    that records no model predates the record and is kept; a fresh reply must say."""
    if answered is None:
        if cached:
            return None
        return (
            f"the reply does not say which model answered; {configured} was asked for "
            "(run.require_model: exact)"
        )
    if same_model(configured, answered):
        return None
    return (
        f"answered by {answered}, not the configured {configured} (a re-routed or renamed "
        "model; run.require_model: exact refuses it)"
    )


def provenance(by_model: Mapping[str, Usage]) -> dict[str, dict[str, Any]]:
    """Per configured model spec with answered calls: the calls per answering model, the
    answers that record none, the answering models that are not the configured one by the
    rule (`other_models`), and whether more than one model answered (`mixed`)."""
    found: dict[str, dict[str, Any]] = {}
    for spec, usage in sorted(by_model.items()):
        answered = {k: v for k, v in sorted(usage.answered_by.items()) if v > 0}
        if not answered and not usage.unrecorded_model:
            continue
        found[spec] = {
            "answered_by": answered,
            "unrecorded": usage.unrecorded_model,
            "other_models": [name for name in answered if not same_model(spec, name)],
            "mixed": len(answered) > 1,
        }
    return found


def provenance_lines(record: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """What a summary line says of `provenance`'s record: (line, is a warning) per model whose
    answers came from another model, from several, under another name than configured (a
    snapshot: both shown), or without a recorded model. A model that answered as itself under
    its configured name needs no line."""
    lines: list[tuple[str, bool]] = []
    for spec, entry in record.items():
        if not isinstance(entry, Mapping):
            continue
        answered = {str(k): v for k, v in (entry.get("answered_by") or {}).items()}
        others = [str(name) for name in entry.get("other_models") or []]
        unrecorded = int(entry.get("unrecorded") or 0)
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


__all__ = [
    "RequireModel",
    "model_id_of",
    "provenance",
    "provenance_lines",
    "refusal",
    "same_model",
]
