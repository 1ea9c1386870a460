"""Vote aggregation: every LPG-Bench rule, its boundaries, and other panel sizes."""

from __future__ import annotations

from typing import cast

import pytest

from titjudge.data.votes import VoteThresholds, aggregate_votes, decide
from titjudge.errors import DataError
from titjudge.records.items import HumanPair, Vote, Winner


def vote(
    a: int, b: int, t: int, experts: str = "", pid: str = "p1", ia: str = "x", ib: str = "y"
) -> Vote:
    verdicts = tuple(cast(Winner, v) for v in experts.split())
    return Vote(pid, ia, ib, a, b, t, verdicts)


@pytest.mark.parametrize(
    ("n", "strong", "min_pref"),
    [(15, 10, 8), (9, 6, 5), (20, 14, 11), (3, 2, 2), (1, 1, 1), (30, 20, 16)],
)
def test_thresholds_generalise_by_rounding_up(n: int, strong: int, min_pref: int) -> None:
    assert VoteThresholds.for_panel(n) == VoteThresholds(n, strong, min_pref)


def test_thresholds_reject_empty_panel() -> None:
    with pytest.raises(DataError, match="at least 1"):
        VoteThresholds.for_panel(0)


@pytest.mark.parametrize(
    ("counts", "winner"),
    [
        ((10, 5, 0), "a"),
        ((0, 10, 5), "b"),
        ((5, 0, 10), "tie"),
        ((15, 0, 0), "a"),
        ((2, 3, 10), "tie"),
    ],
)
def test_strong_consensus_at_ten_of_fifteen(counts: tuple[int, int, int], winner: str) -> None:
    decision = decide(vote(*counts))
    assert (decision.winner, decision.rule) == (winner, "strong")


def test_nine_votes_are_not_strong_consensus() -> None:
    # 9 of 15 for a, 60% of preference votes: neither strong nor advantage -> experts
    decision = decide(vote(9, 6, 0, "b b a"))
    assert (decision.winner, decision.rule) == ("b", "expert")


def test_nine_tie_votes_are_not_a_strong_tie() -> None:
    decision = decide(vote(3, 3, 9, "a a a"))
    assert (decision.winner, decision.rule) == ("a", "expert")


def test_advantage_at_exactly_75_percent() -> None:
    # 9 of 12 preference votes = 75% exactly
    decision = decide(vote(9, 3, 3))
    assert (decision.winner, decision.rule) == ("a", "advantage")
    decision = decide(vote(3, 9, 3))
    assert (decision.winner, decision.rule) == ("b", "advantage")


def test_just_below_75_percent_goes_to_experts() -> None:
    # 8 of 11 preference votes = 72.7%
    decision = decide(vote(8, 3, 4, "tie tie b"))
    assert (decision.winner, decision.rule) == ("tie", "expert")


def test_seven_preference_votes_are_not_enough_for_advantage() -> None:
    # 6 of 7 preference votes is 86%, but only 7 annotators expressed a preference
    decision = decide(vote(6, 1, 8, "b b a"))
    assert (decision.winner, decision.rule) == ("b", "expert")


def test_eight_preference_votes_take_the_advantage_path() -> None:
    decision = decide(vote(6, 2, 7, "b b b"))  # 6/8 = 75%: experts are not consulted
    assert (decision.winner, decision.rule) == ("a", "advantage")


def test_expert_majority_and_three_way_split() -> None:
    assert decide(vote(7, 6, 2, "a tie a")).winner == "a"
    split = decide(vote(7, 6, 2, "a b tie"))
    assert (split.winner, split.rule) == ("tie", "expert_split_tie")


def test_no_experts_leaves_the_pair_unresolved() -> None:
    decision = decide(vote(7, 6, 2))
    assert (decision.winner, decision.rule) == (None, "unresolved")


@pytest.mark.parametrize(
    ("counts", "winner", "rule"),
    [
        ((6, 3, 0), "a", "strong"),  # 6 = ceil(2*9/3)
        ((5, 2, 2), "b", "expert"),  # 5 of 7 = 71% < 75%
        ((4, 1, 4), "a", "advantage"),  # 5 preference votes = ceil(8*9/15), 80%
        ((3, 1, 5), "b", "expert"),  # 4 preference votes < 5
    ],
)
def test_panel_of_nine(counts: tuple[int, int, int], winner: str, rule: str) -> None:
    decision = decide(vote(*counts, "b b a"), VoteThresholds.for_panel(9))
    assert (decision.winner, decision.rule) == (winner, rule)


@pytest.mark.parametrize(
    ("counts", "winner", "rule"),
    [
        ((14, 6, 0), "a", "strong"),
        ((13, 7, 0), "b", "expert"),  # 13 < 14, 65%
        ((13, 4, 3), "a", "advantage"),  # 13/17 = 76%
        ((9, 1, 10), "b", "expert"),  # 10 preference votes < 11
        ((9, 2, 9), "a", "advantage"),  # 11 preference votes, 82%
    ],
)
def test_panel_of_twenty(counts: tuple[int, int, int], winner: str, rule: str) -> None:
    decision = decide(vote(*counts, "b b tie"), VoteThresholds.for_panel(20))
    assert (decision.winner, decision.rule) == (winner, rule)


def test_aggregate_keeps_order_ties_and_counts_rules() -> None:
    votes = [
        vote(10, 5, 0, ia="a1", ib="b1"),
        vote(5, 0, 10, ia="a2", ib="b2"),
        vote(9, 3, 3, ia="a3", ib="b3"),
        vote(7, 6, 2, "b b a", ia="a4", ib="b4"),
        vote(7, 6, 2, "a b tie", ia="a5", ib="b5"),
        vote(7, 6, 2, ia="a6", ib="b6"),
    ]
    result = aggregate_votes(votes, panel_size=15)
    assert result.pairs == [
        HumanPair("p1", "a1", "b1", "a"),
        HumanPair("p1", "a2", "b2", "tie"),
        HumanPair("p1", "a3", "b3", "a"),
        HumanPair("p1", "a4", "b4", "b"),
        HumanPair("p1", "a5", "b5", "tie"),
    ]
    assert result.unresolved == [votes[5]]
    assert result.counts == {
        "strong": 2,
        "advantage": 1,
        "expert": 1,
        "expert_split_tie": 1,
        "unresolved": 1,
    }
    assert (result.strong, result.advantage, result.expert, result.expert_split_tie) == (2, 1, 1, 1)
    assert result.n_ties == 2


def test_fixed_panel_rejects_a_row_of_another_size() -> None:
    with pytest.raises(DataError, match=r"x\|y: votes add up to 14, panel size is 15"):
        aggregate_votes([vote(10, 4, 0)], panel_size=15)


def test_flexible_panel_derives_thresholds_per_row() -> None:
    # 6 of 9 is strong for a panel of 9; 6 of 15 would not be
    result = aggregate_votes([vote(6, 3, 0, ia="a"), vote(6, 5, 4, "b b b", ib="c")])
    assert [(p.winner, d.rule) for p, d in zip(result.pairs, result.decisions, strict=True)] == [
        ("a", "strong"),
        ("b", "expert"),
    ]
