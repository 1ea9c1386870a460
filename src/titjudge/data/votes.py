"""Annotator votes -> one human verdict per pair, by the LPG-Bench rules (docs/method.md, 'Vote aggregation').

Rules, applied in order for a panel of N annotators (V_A + V_B + V_T = N):

1. Strong consensus: any of V_A, V_B, V_T >= ceil(2N/3) decides (10 of 15).
2. Significant advantage: if V_A + V_B >= ceil(8N/15) (8 of 15) and one side holds
   >= 75% of those preference votes, that side wins.
3. High disagreement: the 3 senior experts decide by majority; when all three differ
   the pair is a tie. A row that needs experts but has none is *unresolved*: it is
   reported and left out, never guessed.

The fractions 2/3, 8/15 and 3/4 are the paper's thresholds for N = 15, generalised by
rounding up, so that "at least" stays "at least" for any N (N = 9: 6 and 5; N = 20:
14 and 11). All comparisons use integer arithmetic: no float edge cases at exactly 75%.
Ties (winner 'tie') are kept as pairs; pairwise accuracy skips them, rankings use them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from titjudge.errors import DataError
from titjudge.records.items import HumanPair, Vote, Winner

Rule = Literal["strong", "advantage", "expert", "expert_split_tie", "unresolved"]
RULES: tuple[Rule, ...] = ("strong", "advantage", "expert", "expert_split_tie", "unresolved")


@dataclass(frozen=True)
class VoteThresholds:
    """Vote counts that trigger rules 1 and 2 for a panel of `panel_size` annotators."""

    panel_size: int
    strong: int
    min_preference: int

    @classmethod
    def for_panel(cls, panel_size: int) -> VoteThresholds:
        if panel_size < 1:
            raise DataError(f"panel size must be at least 1 annotator, got {panel_size}")
        # ceil(2N/3) and ceil(8N/15) in integers
        return cls(panel_size, -(-2 * panel_size // 3), -(-8 * panel_size // 15))


@dataclass(frozen=True)
class Decision:
    """How one vote row was decided; `winner` is None only for unresolved rows."""

    vote: Vote
    winner: Winner | None
    rule: Rule


@dataclass
class AggregationResult:
    """Pairs decided (in input order), rows left unresolved, and how many each rule decided."""

    pairs: list[HumanPair]
    unresolved: list[Vote]
    decisions: list[Decision]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def strong(self) -> int:
        return self.counts.get("strong", 0)

    @property
    def advantage(self) -> int:
        return self.counts.get("advantage", 0)

    @property
    def expert(self) -> int:
        return self.counts.get("expert", 0)

    @property
    def expert_split_tie(self) -> int:
        return self.counts.get("expert_split_tie", 0)

    @property
    def n_ties(self) -> int:
        return sum(1 for p in self.pairs if p.winner == "tie")


def expert_majority(experts: Sequence[Winner]) -> Winner | None:
    """The verdict a strict majority of experts gave, or None when there is none."""
    if not experts:
        return None
    verdict, count = Counter(experts).most_common(1)[0]
    return verdict if 2 * count > len(experts) else None


def decide(vote: Vote, thresholds: VoteThresholds | None = None) -> Decision:
    """Apply the three rules to one row; thresholds default to the row's own panel size."""
    limits = thresholds or VoteThresholds.for_panel(vote.total)
    if vote.total != limits.panel_size:
        raise DataError(
            f"pair {vote.item_a}|{vote.item_b}: votes add up to {vote.total}, panel size is {limits.panel_size}"
        )
    counts: tuple[tuple[Winner, int], ...] = (
        ("a", vote.votes_a),
        ("b", vote.votes_b),
        ("tie", vote.votes_tie),
    )
    for winner, count in counts:
        if count >= limits.strong:
            return Decision(vote, winner, "strong")
    preference = vote.votes_a + vote.votes_b
    if preference >= limits.min_preference:
        if 4 * vote.votes_a >= 3 * preference:
            return Decision(vote, "a", "advantage")
        if 4 * vote.votes_b >= 3 * preference:
            return Decision(vote, "b", "advantage")
    if not vote.experts:
        return Decision(vote, None, "unresolved")
    majority = expert_majority(vote.experts)
    if majority is None:
        return Decision(vote, "tie", "expert_split_tie")
    return Decision(vote, majority, "expert")


def aggregate_votes(votes: Sequence[Vote], panel_size: int | None = None) -> AggregationResult:
    """Aggregate every row. `panel_size=None` derives thresholds per row from its total;
    an int requires every row to sum to it (a DataError names the first that does not)."""
    fixed = VoteThresholds.for_panel(panel_size) if panel_size is not None else None
    decisions = [decide(vote, fixed) for vote in votes]
    pairs = [
        HumanPair(
            d.vote.prompt_id,
            d.vote.item_a,
            d.vote.item_b,
            d.winner,
            (d.vote.votes_a, d.vote.votes_b, d.vote.votes_tie),
        )
        for d in decisions
        if d.winner is not None
    ]
    counts = Counter(d.rule for d in decisions)
    return AggregationResult(
        pairs=pairs,
        unresolved=[d.vote for d in decisions if d.winner is None],
        decisions=decisions,
        counts={rule: counts.get(rule, 0) for rule in RULES},
    )
