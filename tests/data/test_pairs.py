"""Pairs, ranks and votes CSV files: round trips and every bad row (file:line in the message)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from titjudge.data.pairs import (
    PanelSize,
    load_pairs,
    load_ranks,
    load_votes_with_lines,
    write_pairs,
    write_ranks,
    write_votes,
)
from titjudge.errors import DataError
from titjudge.records.items import HumanPair, Item, RankRow, Vote


def load_votes(path: Path, panel_size: PanelSize = "same") -> list[Vote]:
    """The votes as the annotation code reads them (`load_votes_with_lines`), lines dropped."""
    return [vote for _, vote in load_votes_with_lines(path, panel_size)]


VOTE_HEADER = "prompt_id,item_a,item_b,votes_a,votes_b,votes_tie"


def csv(tmp_path: Path, name: str, *rows: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def err(path: Path, line: int, text: str) -> str:
    return re.escape(f"{path}:{line}: {text}")


# --------------------------------------------------------------------------- pairs


def test_pairs_round_trip(tmp_path: Path) -> None:
    pairs = [
        HumanPair("p1", "a", "b", "a"),
        HumanPair("p1", "a", "c", "tie"),
        HumanPair("p2", "d", "e", "b"),
    ]
    write_pairs(pairs, tmp_path / "pairs.csv")
    assert (tmp_path / "pairs.csv").read_text().splitlines()[0] == "prompt_id,item_a,item_b,winner"
    assert load_pairs(tmp_path / "pairs.csv") == pairs


def test_pairs_winner_is_case_insensitive_and_extra_columns_ignored(tmp_path: Path) -> None:
    path = csv(tmp_path, "p.csv", "prompt_id,item_a,item_b,winner,note", " p1 , a , b , TIE , hi")
    assert load_pairs(path) == [HumanPair("p1", "a", "b", "tie")]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("p1,a,b,left", "winner must be one of a, b, tie; got 'left'"),
        ("p1,a,a,a", "item_a and item_b are the same item 'a'"),
        ("p1,,b,a", "field 'item_a' is empty"),
        ("p1,b,a,a", "pair 'b' / 'a' appears twice (first at line 2)"),
        ("p1,a,b", "expected 4 fields as in the header, got 3"),
    ],
)
def test_bad_pair_rows(tmp_path: Path, row: str, message: str) -> None:
    path = csv(tmp_path, "p.csv", "prompt_id,item_a,item_b,winner", "p1,a,b,a", row)
    with pytest.raises(DataError, match=err(path, 3, message)):
        load_pairs(path)


def test_pairs_checked_against_the_manifest(tmp_path: Path) -> None:
    items = {
        i: Item(i, p, "x", tmp_path / f"{i}.png", "m")
        for i, p in [("a", "p1"), ("b", "p1"), ("c", "p2")]
    }
    unknown = csv(tmp_path, "u.csv", "prompt_id,item_a,item_b,winner", "p1,a,b,a", "p1,a,bb,b")
    with pytest.raises(DataError, match=err(unknown, 3, "unknown item 'bb' (not in the manifest)")):
        load_pairs(unknown, items)
    mixed = csv(tmp_path, "m.csv", "prompt_id,item_a,item_b,winner", "p1,a,c,a")
    with pytest.raises(DataError, match=err(mixed, 2, "item 'c' belongs to prompt 'p2', not 'p1'")):
        load_pairs(mixed, items)
    assert load_pairs(csv(tmp_path, "ok.csv", "prompt_id,item_a,item_b,winner", "p1,a,b,b"), items)


def test_missing_column_and_missing_file(tmp_path: Path) -> None:
    path = csv(tmp_path, "p.csv", "prompt_id,item_a,item_b", "p1,a,b")
    with pytest.raises(DataError, match=err(path, 1, "missing column(s) winner")):
        load_pairs(path)
    with pytest.raises(
        DataError, match=re.escape(f"{tmp_path / 'none.csv'}: pairs file not found")
    ):
        load_pairs(tmp_path / "none.csv")
    empty = csv(tmp_path, "e.csv", "")
    with pytest.raises(DataError, match="pairs file is empty"):
        load_pairs(empty)


# --------------------------------------------------------------------------- ranks


def test_ranks_round_trip_with_shared_ranks(tmp_path: Path) -> None:
    rows = [RankRow("p1", "a", 1.0), RankRow("p1", "b", 2.5), RankRow("p1", "c", 2.5)]
    write_ranks(rows, tmp_path / "r.csv")
    assert (
        tmp_path / "r.csv"
    ).read_text() == "prompt_id,item_id,rank\np1,a,1\np1,b,2.5\np1,c,2.5\n"
    assert load_ranks(tmp_path / "r.csv") == rows


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("p1,b,first", "rank must be a number, got 'first'"),
        ("p1,b,0", "rank must be >= 1 (1 = best), got '0'"),
        ("p1,b,nan", "rank must be >= 1 (1 = best), got 'nan'"),
        ("p1,a,2", "item 'a' ranked twice for prompt 'p1' (first at line 2)"),
    ],
)
def test_bad_rank_rows(tmp_path: Path, row: str, message: str) -> None:
    path = csv(tmp_path, "r.csv", "prompt_id,item_id,rank", "p1,a,1", row)
    with pytest.raises(DataError, match=err(path, 3, message)):
        load_ranks(path)


# --------------------------------------------------------------------------- votes


def test_votes_round_trip_with_experts(tmp_path: Path) -> None:
    votes = [Vote("p1", "a", "b", 10, 5, 0, ("a", "a", "b")), Vote("p1", "a", "c", 7, 6, 2)]
    write_votes(votes, tmp_path / "v.csv")
    text = (tmp_path / "v.csv").read_text()
    assert (
        text == f"{VOTE_HEADER},expert_1,expert_2,expert_3\np1,a,b,10,5,0,a,a,b\np1,a,c,7,6,2,,,\n"
    )
    assert load_votes(tmp_path / "v.csv") == votes


def test_votes_without_expert_columns(tmp_path: Path) -> None:
    path = csv(tmp_path, "v.csv", VOTE_HEADER, "p1,a,b,10,5,0", "", "p1,a,c,1,1,13")
    assert load_votes_with_lines(path) == [
        (2, Vote("p1", "a", "b", 10, 5, 0)),
        (4, Vote("p1", "a", "c", 1, 1, 13)),
    ]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("p1,a,c,-1,10,6", "votes_a must not be negative, got -1"),
        ("p1,a,c,2.5,10,2", "votes_a must be a whole number, got '2.5'"),
        ("p1,a,c,5,x,5", "votes_b must be a whole number, got 'x'"),
        ("p1,a,c,0,0,0", "no votes (votes_a + votes_b + votes_tie = 0)"),
        ("p1,a,c,5,5,4", "votes add up to 14 but the panel has 15 annotators (set by line 2)"),
    ],
)
def test_bad_vote_rows(tmp_path: Path, row: str, message: str) -> None:
    path = csv(tmp_path, "v.csv", VOTE_HEADER, "p1,a,b,10,5,0", row)
    with pytest.raises(DataError, match=err(path, 3, message)):
        load_votes(path)


def test_panel_size_modes(tmp_path: Path) -> None:
    path = csv(tmp_path, "v.csv", VOTE_HEADER, "p1,a,b,10,4,0", "p1,a,c,5,5,5")
    with pytest.raises(DataError, match=err(path, 3, "votes add up to 15 but the panel has 14")):
        load_votes(path)
    with pytest.raises(
        DataError,
        match=err(
            path, 2, "votes add up to 14 but the panel has 15 annotators (set by --panel-size)"
        ),
    ):
        load_votes(path, panel_size=15)
    assert [v.total for v in load_votes(path, panel_size=None)] == [14, 15]


@pytest.mark.parametrize(
    ("experts", "message"),
    [
        ("a,,b", "expert verdicts must be all filled or all empty"),
        ("a,b,left", "expert_3 must be one of a, b, tie; got 'left'"),
    ],
)
def test_bad_expert_verdicts(tmp_path: Path, experts: str, message: str) -> None:
    path = csv(
        tmp_path, "v.csv", f"{VOTE_HEADER},expert_1,expert_2,expert_3", f"p1,a,b,7,6,2,{experts}"
    )
    with pytest.raises(DataError, match=err(path, 2, message)):
        load_votes(path)


def test_incomplete_expert_columns(tmp_path: Path) -> None:
    path = csv(tmp_path, "v.csv", f"{VOTE_HEADER},expert_1,expert_2", "p1,a,b,7,6,2,a,b")
    with pytest.raises(
        DataError,
        match=err(path, 1, "expert columns must be all of expert_1..expert_3; missing expert_3"),
    ):
        load_votes(path)


def test_a_pairs_files_votes_are_read_back_as_written_and_not_part_of_the_pair(
    tmp_path: Path,
) -> None:
    path = tmp_path / "pairs.csv"
    pairs = [HumanPair("p1", "a", "b", "a", (7, 2, 1)), HumanPair("p1", "a", "c", "tie", None)]
    write_pairs(pairs, path)
    assert path.read_text().splitlines() == [
        "prompt_id,item_a,item_b,winner,votes_a,votes_b,votes_tie",
        "p1,a,b,a,7,2,1",
        "p1,a,c,tie,,,",
    ]
    back = load_pairs(path)
    assert [p.votes for p in back] == [(7, 2, 1), None]
    assert back == [HumanPair("p1", "a", "b", "a"), HumanPair("p1", "a", "c", "tie")]
    write_pairs([HumanPair("p1", "a", "b", "a")], path)  # no votes: the four columns only
    assert path.read_text() == "prompt_id,item_a,item_b,winner\np1,a,b,a\n"


@pytest.mark.parametrize(
    ("row", "says"),
    [("p1,a,b,a,7,,1", "filled together or not at all"), ("p1,a,b,a,7,x,1", "votes_b")],
)
def test_a_bad_votes_cell_is_one_line_naming_the_row(tmp_path: Path, row: str, says: str) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text(f"prompt_id,item_a,item_b,winner,votes_a,votes_b,votes_tie\n{row}\n")
    with pytest.raises(DataError, match=says) as found:
        load_pairs(path)
    assert f"{path}:2" in str(found.value)
