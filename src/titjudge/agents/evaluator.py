"""The evaluator step: item results -> score rows -> metrics against human data.

A variant that fell back for some items holds scores from two judges. Pairs that
compare a judged score with a fallback score are left out of that variant's pairwise
metrics and counted (`n_pairs_mixed_source`), so two scales are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from titjudge.agents.nodes import ItemResult
from titjudge.data.records import HumanPair, Item, RankRow, ScoreRow


@dataclass
class HumanData:
    pairs: list[HumanPair]
    ranks: list[RankRow]
    items: list[Item]


def score_rows(results: Sequence[ItemResult]) -> list[ScoreRow]:
    rows = []
    for result in sorted(results, key=lambda r: r.item.item_id):
        for outcome in result.outcomes:
            score = outcome.score if outcome.status != "failed" else None
            rows.append(ScoreRow(result.item.item_id, outcome.variant, score, outcome.status))
    return rows


def evaluate_results(
    results: Sequence[ItemResult], human: HumanData | None, *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Metrics per variant; `{}` without human data (the run then only writes scores)."""
    rows = score_rows(results)
    if human is None or not human.pairs or not rows:
        return {}
    from titjudge.metrics.summary import evaluate

    summary = evaluate(rows, human.pairs, human.ranks, human.items, bootstrap=bootstrap, seed=seed)
    for variant in sorted({r.variant for r in rows if r.status == "fallback"}):
        own = [r for r in rows if r.variant == variant]
        source = {r.item_id: r.status for r in own}
        clean = [p for p in human.pairs if not _mixed(p, source)]
        redone = evaluate(own, clean, human.ranks, human.items, bootstrap=bootstrap, seed=seed)
        entry = dict(redone[variant])
        entry["n_pairs_mixed_source"] = len(human.pairs) - len(clean)
        summary[variant] = entry
    return summary


def _mixed(pair: HumanPair, source: dict[str, str]) -> bool:
    a, b = source.get(pair.item_a), source.get(pair.item_b)
    return a is not None and b is not None and "failed" not in (a, b) and a != b
