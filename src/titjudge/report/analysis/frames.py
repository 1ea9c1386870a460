"""A run as three pandas DataFrames (`titjudge.load_run(...).items / .pairs / .metrics`).

- `items`: one row per (item, variant) of items.jsonl: ids, T2I model, variant, status,
  score, rationale, description, errors, tokens, cost, latency, cache hit, answering models.
- `pairs`: one row per (human pair, variant): the prompt (text, words), both items and their
  T2I models, the human winner, the variant's verdict and scores, `outcome` (agree,
  disagree, metric_tie, failed, human_tie) and `correct`, the pair's contribution to
  pairwise accuracy exactly as metrics.json counts it (1.0 / 0.0; NaN where the pair is not
  counted: a side failed, the fallback rule left it out, or humans tied), so
  `pairs.groupby("variant").correct.mean()` is metrics.json's `pairwise_accuracy`. The
  outcomes come from `metrics.outcomes.run_outcomes`, the function `evaluate` calls.
- `metrics`: one row per variant: metrics.json's scalar fields, each CI as `<metric>_ci_low`
  / `_ci_high`, the provenance (`kind`, `model`, `template`, `template_sha256`, ...) and its
  origin (`fallback_share`, `model_stopped`: summary.json's `origins`; None: not recorded).

pandas is an optional extra (`pip install -e '.[analysis]'`); without it asking for a frame
is one MissingDependencyError line.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from titjudge.errors import MissingDependencyError, install_hint
from titjudge.report.analysis.run import RunData, prompt_words

if TYPE_CHECKING:
    import pandas as pd

ITEM_COLUMNS = (
    "item_id", "prompt_id", "t2i_model", "image", "variant", "status", "score", "rationale",
    "description", "error", "describer_status", "describer_error", "tokens_in", "tokens_out",
    "cost", "latency", "cached", "answered_by",
)  # fmt: skip
PAIR_COLUMNS = (
    "prompt_id", "prompt", "prompt_words", "item_a", "item_b", "t2i_model_a", "t2i_model_b",
    "human", "variant", "verdict", "score_a", "score_b", "outcome", "correct",
)  # fmt: skip
#: variant fields kept out of the metrics frame: nested spreads with their own shape
_NESTED = ("thresholds", "repeats", "pairwise")


def require_pandas() -> Any:
    """The pandas module, or one MissingDependencyError line saying how to add it."""
    try:
        import pandas
    except ImportError:
        raise MissingDependencyError(
            f"run frames need pandas, which is not installed; add it with: {install_hint('analysis')}"
        ) from None
    return pandas


def items_frame(run: RunData) -> pd.DataFrame:
    pd = require_pandas()
    rows = [
        {
            "item_id": line.item_id,
            "prompt_id": line.prompt_id,
            "t2i_model": line.t2i_model,
            "image": line.image,
            "variant": line.variant,
            "status": line.status,
            "score": line.score if line.score is not None else math.nan,
            "rationale": line.rationale,
            "description": line.description,
            "error": line.error,
            "describer_status": line.describer.status,
            "describer_error": line.describer.error,
            "tokens_in": line.tokens_in,
            "tokens_out": line.tokens_out,
            "cost": line.cost if line.cost is not None else math.nan,
            "latency": line.latency,
            "cached": line.cached,
            "answered_by": ", ".join(line.answered_by),
        }
        for line in run.lines
    ]
    return pd.DataFrame(rows, columns=list(ITEM_COLUMNS))


def _score_verdict(a: float | None, b: float | None, digits: int | None) -> str | None:
    if a is None or b is None:
        return None
    if digits is not None:
        a, b = round(a, digits), round(b, digits)
    return "a" if a > b else "b" if b > a else "tie"


def _judged_verdict(judged: Any, item_a: str) -> str | None:
    verdict = judged.verdict if judged is not None else None
    if verdict is None or judged.item_a == item_a:
        return verdict
    return {"a": "b", "b": "a"}.get(verdict, verdict)


def pair_records(run: RunData) -> list[dict[str, Any]]:
    """The pairs frame's rows as dicts (see the module docstring)."""
    from titjudge.metrics.outcomes import run_outcomes

    human = run.human
    if not human.pairs:
        return []
    _, outcomes = run_outcomes(run.rows, human.pairs, run.record.verdicts, run.round_digits)
    scores: dict[tuple[str, str], tuple[str, float | None]] = {
        (row.variant, row.item_id): (row.status, row.score) for row in run.rows
    }
    judged = {
        name: {frozenset((j.item_a, j.item_b)): j for j in found}
        for name, found in run.record.verdicts.items()
    }
    records: list[dict[str, Any]] = []
    decided = -1  # position among the non-tie pairs: the outcome arrays' index
    for pair in human.pairs:
        decided += pair.winner != "tie"
        item_a, item_b = human.items[pair.item_a], human.items[pair.item_b]
        base = {
            "prompt_id": pair.prompt_id,
            "prompt": human.prompts.get(pair.prompt_id),
            "prompt_words": prompt_words(human.prompts.get(pair.prompt_id) or ""),
            "item_a": pair.item_a,
            "item_b": pair.item_b,
            "t2i_model_a": item_a.t2i_model,
            "t2i_model_b": item_b.t2i_model,
            "human": pair.winner,
        }
        for variant in run.variants:
            status_a, score_a = scores.get((variant, pair.item_a), ("failed", None))
            status_b, score_b = scores.get((variant, pair.item_b), ("failed", None))
            found = outcomes.get(variant)
            if variant in judged:
                verdict = _judged_verdict(
                    judged[variant].get(frozenset((pair.item_a, pair.item_b))), pair.item_a
                )
            else:
                verdict = _score_verdict(score_a, score_b, run.round_digits)
            if pair.winner == "tie":
                outcome, correct = ("human_tie" if verdict is not None else "failed"), math.nan
            elif found is None or not found.outcomes.evaluated[decided]:
                outcome, correct = "failed", math.nan
            else:
                right = bool(found.outcomes.correct[decided])
                tie = bool(found.outcomes.metric_tie[decided])
                outcome = "agree" if right else "metric_tie" if tie else "disagree"
                correct = 1.0 if right else 0.0
            records.append(
                {
                    **base,
                    "variant": variant,
                    "verdict": verdict,
                    "score_a": score_a if score_a is not None else math.nan,
                    "score_b": score_b if score_b is not None else math.nan,
                    "outcome": outcome,
                    "correct": correct,
                }
            )
    return records


def pairs_frame(run: RunData) -> pd.DataFrame:
    pd = require_pandas()
    return pd.DataFrame(pair_records(run), columns=list(PAIR_COLUMNS))


def metric_records(run: RunData) -> list[dict[str, Any]]:
    """One flat dict per variant of the record (metrics.json's numbers, CIs, provenance)."""
    records = []
    for name, variant in run.record.variants.items():
        flat: dict[str, Any] = {"variant": name}
        for key, value in variant.model_dump(mode="json").items():
            if key == "ci":
                for metric, interval in (value or {}).items():
                    low, high = interval if isinstance(interval, list) else (None, None)
                    flat[f"{metric}_ci_low"], flat[f"{metric}_ci_high"] = low, high
            elif key == "provenance":
                for field, found in (value or {}).items():
                    if isinstance(found, list):
                        found = ", ".join(found)
                    elif isinstance(found, dict):  # thinking, sampling: one JSON text cell
                        found = json.dumps(found, sort_keys=True) if found else None
                    flat[field] = found
            elif key not in _NESTED and not isinstance(value, dict | list):
                flat[key] = value
        origin = run.record.origin(name)  # beside its numbers: whose scores they are
        flat["fallback_share"] = origin.fallback_share if origin is not None else None
        flat["model_stopped"] = origin.stopped if origin is not None else None
        records.append(flat)
    return records


def metrics_frame(run: RunData) -> pd.DataFrame:
    pd = require_pandas()
    records = metric_records(run)
    frame = pd.DataFrame(records)
    return frame if records else pd.DataFrame(columns=["variant"])
