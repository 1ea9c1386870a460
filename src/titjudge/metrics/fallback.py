"""The fallback rule: a variant whose failed calls fell back to another judge never mixes scales.

A variant that fell back for some items holds scores from two judges. Pairs that compare a
judged score with a fallback score are left out of that variant's pairwise metrics and
counted (`n_pairs_mixed_source`). Its rank metrics (SRCC, KRCC, nDCG, its leaderboard
standing) rank only the judged scores: fallback items are left out of each prompt's
ranking like failed ones and counted (`n_fallback_unranked`).

`titjudge run` and `titjudge metrics` both apply it through `apply_fallback_rule`, so a
scores CSV gives the same numbers as the run that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from titjudge.data.records import HumanPair, Item, RankRow, ScoreRow

#: metrics that rank a prompt's items by score: a fallback's scores (another judge's scale)
#: never enter them; those items are left out of the ranking like failed ones
RANK_METRICS = (
    "srcc",
    "krcc",
    "n_prompts",
    "n_prompts_skipped",
    "ndcg",
    "n_prompts_ndcg",
    "n_prompts_skipped_ndcg",
    "leaderboard_srcc",
)


def apply_fallback_rule(
    summary: dict[str, Any],
    rows: Sequence[ScoreRow],
    pairs: Sequence[HumanPair],
    ranks: Sequence[RankRow],
    items: Sequence[Item] | None,
    **options: Any,
) -> dict[str, Any]:
    """`summary` (from `metrics.summary.evaluate` with the same `options`) with every variant
    that has fallback rows re-evaluated under the fallback rule; changed in place, returned."""
    from titjudge.metrics.summary import evaluate

    for variant in sorted({r.variant for r in rows if r.status == "fallback"}):
        own = [r for r in rows if r.variant == variant]
        source = {r.item_id: r.status for r in own}
        clean = [p for p in pairs if not _mixed(p, source)]
        redone = evaluate(own, clean, ranks, items, **options)
        entry = dict(redone[variant])
        entry["n_pairs_mixed_source"] = len(pairs) - len(clean)
        # rank metrics order a prompt's items by score: the fallback's scores (another scale)
        # stay out of them, as failed items do, so judged scores are ranked among themselves
        judged = [
            r if r.status != "fallback" else ScoreRow(r.item_id, r.variant, None, "failed")
            for r in own
        ]
        ranked = evaluate(judged, clean, ranks, items, **options)
        for key in RANK_METRICS:
            if key in ranked[variant]:
                entry[key] = ranked[variant][key]
        entry["ci"] = {
            **(entry.get("ci") or {}),
            **{k: v for k, v in (ranked[variant].get("ci") or {}).items() if k in RANK_METRICS},
        }
        entry["n_fallback_unranked"] = sum(r.status == "fallback" for r in own)
        board = summary.get("leaderboard")
        if board and ranked.get("leaderboard"):
            board["variants"][variant] = ranked["leaderboard"]["variants"][variant]
        summary[variant] = entry
    return summary


def _mixed(pair: HumanPair, source: Mapping[str, str]) -> bool:
    a, b = source.get(pair.item_a), source.get(pair.item_b)
    return a is not None and b is not None and "failed" not in (a, b) and a != b
