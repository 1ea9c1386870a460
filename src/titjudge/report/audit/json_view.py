"""`titjudge audit RUN --json`: the audit's facts as one JSON object.

The same `AuditData` the terminal and the page show: per variant the run record's numbers
and provenance with the outcome counts of its pairs; per human pair each variant's outcome
(and, for a pairwise judge, its verdict, both orders' choices and rationales and whether the
orders agreed). Nothing here computes a metric.
"""

from __future__ import annotations

from typing import Any

from titjudge.metrics.catalog import record_fields
from titjudge.report.audit.data import AuditData, AuditPair, AuditVerdict, VariantSummary


#: the record fields each variant repeats, as the metric catalog lists them (the rest:
#: `titjudge metrics RUN --json`)
def _variant(data: AuditData, summary: VariantSummary) -> dict[str, Any]:
    entry = data.record.variants.get(summary.name)
    found: dict[str, Any] = {k: entry.get(k) if entry else None for k in record_fields()}
    found.update(
        {
            "ci": list(summary.ci) if summary.ci else None,
            "accuracy_source": summary.accuracy_source,
            "counts": dict(summary.counts),
            "n_failed_items": summary.n_failed,
            "n_fallback_items": summary.n_fallback,
            "cost": summary.cost,
            "provenance": summary.provenance.model_dump(mode="json")
            if summary.provenance
            else None,
            "position": summary.position.model_dump() if summary.position else None,
            # where its scores came from, whether its model was stopped (null: not recorded)
            "origin": summary.origin.model_dump(mode="json") if summary.origin else None,
        }
    )
    return found


#: what the audit shows of each presentation order (its samples, usage and raw reply are
#: in the run's pairs_<judge>.jsonl)
_ORDER_FIELDS = {"first", "second", "choice", "rationale", "error", "answered_by"}


def _verdict(verdict: AuditVerdict) -> dict[str, Any]:
    found: dict[str, Any] = {
        "outcome": verdict.outcome,
        "score_a": verdict.score_a,
        "score_b": verdict.score_b,
        "margin": verdict.margin,
    }
    if verdict.judged is not None:
        found["verdict"] = verdict.judged.verdict
        found["orders_agree"] = verdict.judged.orders_agree
        found["orders"] = [
            o.model_dump(mode="json", include=_ORDER_FIELDS) for o in verdict.judged.orders
        ]
    return found


def _pair(audit_pair: AuditPair) -> dict[str, Any]:
    pair = audit_pair.pair
    return {
        "pair_id": audit_pair.pair_id,
        "prompt_id": pair.prompt_id,
        "item_a": pair.item_a,
        "item_b": pair.item_b,
        "human": pair.winner,
        "variants": {name: _verdict(v) for name, v in audit_pair.verdicts.items()},
    }


def audit_json(data: AuditData) -> dict[str, Any]:
    """The audit of one run as a JSON-ready dict (NaN already None in the record)."""
    return {
        "version": data.record.version,
        "name": data.name,
        "run_dir": str(data.run_dir),
        "n_pairs": len(data.pairs),
        "n_pairs_outside": data.n_pairs_outside,
        "describer": data.record.describer,
        "variants": {name: _variant(data, data.summaries[name]) for name in data.variants},
        "pairs": [_pair(p) for p in data.pairs],
    }
