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

from collections.abc import Mapping
from typing import Any

from titjudge.models.core.options import RequireModel
from titjudge.records.calls import Usage
from titjudge.records.provenance import _SNAPSHOT, _norm, _tails, model_id_of


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


__all__ = ["RequireModel", "provenance", "refusal", "same_model"]
