"""Per-prompt rankings with ties (Copeland scores, fractional shared ranks)."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from titjudge.data.ranking import fractional_ranks, rank_items
from titjudge.errors import DataError
from titjudge.records.items import HumanPair, RankRow


def ranks_of(pairs: list[HumanPair]) -> dict[str, float]:
    return {row.item_id: row.rank for row in rank_items(pairs)}


def test_consistent_total_order_is_reproduced_exactly() -> None:
    order = ["e", "c", "a", "d", "b"]  # best first
    rng = random.Random(3)
    pairs = []
    for i, j in combinations(range(len(order)), 2):
        if rng.random() < 0.5:  # the better item on either side
            pairs.append(HumanPair("p", order[i], order[j], "a"))
        else:
            pairs.append(HumanPair("p", order[j], order[i], "b"))
    rng.shuffle(pairs)
    assert ranks_of(pairs) == {"e": 1.0, "c": 2.0, "a": 3.0, "d": 4.0, "b": 5.0}


def test_tie_class_in_a_complete_weak_order_shares_the_average_rank() -> None:
    # a > {b = c} > d
    pairs = [
        HumanPair("p", "a", "b", "a"),
        HumanPair("p", "a", "c", "a"),
        HumanPair("p", "a", "d", "a"),
        HumanPair("p", "b", "c", "tie"),
        HumanPair("p", "d", "b", "b"),
        HumanPair("p", "c", "d", "a"),
    ]
    assert ranks_of(pairs) == {"a": 1.0, "b": 2.5, "c": 2.5, "d": 4.0}


def test_all_ties_give_everyone_the_middle_rank() -> None:
    pairs = [HumanPair("p", x, y, "tie") for x, y in combinations("abcd", 2)]
    assert ranks_of(pairs) == {item: 2.5 for item in "abcd"}


def test_three_cycle_members_share_a_rank_above_the_loser() -> None:
    pairs = [
        HumanPair("p", "a", "b", "a"),
        HumanPair("p", "b", "c", "a"),
        HumanPair("p", "c", "a", "a"),
        HumanPair("p", "d", "a", "b"),
        HumanPair("p", "d", "b", "b"),
        HumanPair("p", "d", "c", "b"),
    ]
    assert ranks_of(pairs) == {"a": 2.0, "b": 2.0, "c": 2.0, "d": 4.0}


def test_prompts_are_ranked_independently_and_sorted() -> None:
    pairs = [
        HumanPair("p2", "y1", "y2", "b"),
        HumanPair("p1", "x1", "x2", "a"),
        HumanPair("p2", "y2", "y3", "tie"),
        HumanPair("p2", "y1", "y3", "b"),
    ]
    assert rank_items(pairs) == [
        RankRow("p1", "x1", 1.0),
        RankRow("p1", "x2", 2.0),
        RankRow("p2", "y2", 1.5),
        RankRow("p2", "y3", 1.5),
        RankRow("p2", "y1", 3.0),
    ]


def test_an_item_in_two_prompts_is_an_error() -> None:
    with pytest.raises(DataError, match="'x' appears in pairs of prompts 'p1' and 'p2'"):
        rank_items([HumanPair("p1", "x", "y", "a"), HumanPair("p2", "x", "z", "a")])


def test_fractional_ranks_average_positions() -> None:
    assert fractional_ranks({"a": 3, "b": 1, "c": 1, "d": 1, "e": -2}) == {
        "a": 1.0,
        "b": 3.0,
        "c": 3.0,
        "d": 3.0,
        "e": 5.0,
    }


def test_cycle_ranks_do_not_depend_on_pair_order() -> None:
    pairs = [
        HumanPair("p", "a", "b", "a"),
        HumanPair("p", "b", "c", "a"),
        HumanPair("p", "c", "a", "a"),
        HumanPair("p", "a", "d", "a"),
    ]
    first = ranks_of(pairs)
    assert first == {"a": 1.0, "b": 2.5, "c": 2.5, "d": 4.0}  # a: +1 -1 +1; b, c: 0; d: -1
    for order in ([3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]):
        assert ranks_of([pairs[i] for i in order]) == first


def test_unjudged_pair_counts_nothing_and_unpaired_item_is_not_ranked() -> None:
    # c-d never judged: as if tied; "e" appears in no pair of p
    pairs = [
        HumanPair("p", "a", "c", "a"),
        HumanPair("p", "a", "d", "a"),
        HumanPair("p", "b", "c", "a"),
        HumanPair("p", "b", "d", "a"),
        HumanPair("p", "a", "b", "tie"),
    ]
    ranks = ranks_of(pairs)
    assert ranks == ranks_of([*pairs, HumanPair("p", "c", "d", "tie")])
    assert ranks == {"a": 1.5, "b": 1.5, "c": 3.5, "d": 3.5} and "e" not in ranks
