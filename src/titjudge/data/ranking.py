"""Per-prompt human rankings (ties allowed) from pair outcomes.

Method: Copeland scoring. Within a prompt every item scores
`wins - losses` over its pairs (a tie counts 0 for both sides); items are ordered by
score, best first. Items with equal scores share the average of the positions they
occupy ("fractional" ranking: 1 = best; two items tied for 2nd and 3rd both get 2.5),
which is the tie convention Spearman's and Kendall's tau-b expect.

Why Copeland:
- With a complete, consistent set of pairs (all pairs judged, outcomes transitive, as
  in LPG-Bench's all-pairs design) the scores are n-1, n-3, ..., so the human total
  order is reproduced exactly; items in a tie class get equal scores, so a complete
  weak order is reproduced exactly as well.
- Indistinguishable items share a rank: all-tie prompts give everyone 0; a 3-cycle
  (A>B, B>C, C>A) gives each member +1-1 = 0 plus the same results against others.
- One noisy upset moves two items by one point each. Ranking the condensation of the
  win graph instead would merge every item between the two into one group, which
  discards most of the signal of 15-annotator data with a few surprising pairs.
Limitation: scores count pairs, so with a sparse design (few pairs per item) items
judged more often get larger magnitudes; LPG-Bench and the synthetic benchmark judge
all pairs of a prompt, where this does not arise. A pair missing from the input counts
nothing for either item, as a tie would; an item in no pair gets no rank.

Against the paper: TIT-Score describes its ranking only as "inspired by merge sort".
A comparison sort assumes transitive outcomes and, given a cycle, returns an order that
depends on which comparisons it happened to make; Copeland counts every pair given, needs
no transitivity and gives the same ranks for any input order. On complete, consistent
pairs it reproduces the human order exactly, as any correct sort would.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from titjudge.errors import DataError
from titjudge.records.items import HumanPair, RankRow


def copeland_scores(pairs: Sequence[HumanPair]) -> dict[str, dict[str, int]]:
    """prompt_id -> item_id -> wins minus losses (ties 0), items in first-seen order."""
    scores: dict[str, dict[str, int]] = defaultdict(dict)
    prompt_of: dict[str, str] = {}
    for pair in pairs:
        table = scores[pair.prompt_id]
        for item_id in (pair.item_a, pair.item_b):
            known = prompt_of.setdefault(item_id, pair.prompt_id)
            if known != pair.prompt_id:
                raise DataError(
                    f"item {item_id!r} appears in pairs of prompts {known!r} and {pair.prompt_id!r}; "
                    "an item belongs to one prompt"
                )
            table.setdefault(item_id, 0)
        if pair.winner == "a":
            table[pair.item_a] += 1
            table[pair.item_b] -= 1
        elif pair.winner == "b":
            table[pair.item_b] += 1
            table[pair.item_a] -= 1
    return dict(scores)


def fractional_ranks(scores: dict[str, int]) -> dict[str, float]:
    """Rank by descending score; equal scores share the mean of their positions (1-based)."""
    ordered = sorted(scores, key=lambda item_id: -scores[item_id])
    ranks: dict[str, float] = {}
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and scores[ordered[end + 1]] == scores[ordered[start]]:
            end += 1
        shared = (start + 1 + end + 1) / 2
        for item_id in ordered[start : end + 1]:
            ranks[item_id] = shared
        start = end + 1
    return ranks


def rank_items(pairs: Sequence[HumanPair]) -> list[RankRow]:
    """Rank every item that appears in `pairs`, per prompt; sorted by prompt, rank, item id."""
    rows: list[RankRow] = []
    for prompt_id, scores in sorted(copeland_scores(pairs).items()):
        ranks = fractional_ranks(scores)
        for item_id in sorted(ranks, key=lambda i: (ranks[i], i)):
            rows.append(RankRow(prompt_id, item_id, ranks[item_id]))
    return rows
