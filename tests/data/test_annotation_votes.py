"""The per-annotator votes file: validation, counting into vote rows, `data aggregate-votes`."""

from __future__ import annotations

from pathlib import Path

import pytest

from titjudge.cli import main
from titjudge.data.annotations import count_votes, load_annotations
from titjudge.data.pairs import load_pairs
from titjudge.errors import DataError
from titjudge.records.items import HumanPair, Vote

HEADER = "prompt_id,item_a,item_b,annotator,choice,shown_left,seconds,voted_at\n"


def write(path: Path, *rows: str) -> Path:
    path.write_text(HEADER + "".join(row + "\n" for row in rows), encoding="utf-8")
    return path


def test_rows_are_counted_per_pair_in_the_first_rows_orientation(tmp_path: Path) -> None:
    votes = write(
        tmp_path / "votes.csv",
        "P1,x,y,ann,a,a,1.5,2026-01-01T00:00:00+00:00",
        "P1,y,x,bob,a,b,2.0,",  # y preferred: a 'b' for x, y
        "P1,x,y,cy,tie,,,",
        "P2,u,v,ann,skip,a,,",
        "P2,u,v,bob,B,a,,",
    )
    located = load_annotations(votes)
    assert located[1][1].seconds == 2.0 and located[1][1].shown_left == "b"
    counted = count_votes(located, votes, panel_size=None)
    assert counted.votes == [(2, Vote("P1", "x", "y", 1, 1, 1)), (6, Vote("P2", "u", "v", 0, 1, 0))]
    assert (counted.skips, counted.annotators) == (1, 3)
    with pytest.raises(
        DataError, match=r"votes.csv:6: pair 'u' / 'v' has 1 vote\(s\) but the panel has 3"
    ):
        count_votes(located, votes, panel_size="same")
    with pytest.raises(DataError, match="has 3 vote"):
        count_votes(located, votes, panel_size=1)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("P1,x,y,ann,maybe,a,,", "votes.csv:2: choice must be one of a, b, tie, skip; got 'maybe'"),
        ("P1,x,y,,a,a,,", "votes.csv:2: field 'annotator' is empty"),
        ("P1,x,x,ann,a,a,,", "same item 'x'"),
        ("P1,x,y,ann,a,left,,", "shown_left must be a or b"),
        ("P1,x,y,ann,a,a,-1,", "seconds must be a finite number >= 0"),
        ("P1,x,y,ann,a,a,soon,", "seconds must be a number"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, row: str, message: str) -> None:
    with pytest.raises(DataError, match=message.replace("(", r"\(")):
        load_annotations(write(tmp_path / "votes.csv", row))


def test_an_annotator_answering_a_pair_twice_is_an_error(tmp_path: Path) -> None:
    votes = write(tmp_path / "votes.csv", "P1,x,y,ann,a,a,,", "P1,y,x,ann,b,a,,")
    with pytest.raises(
        DataError, match=r"votes.csv:3: annotator 'ann' answered .* twice \(first at line 2\)"
    ):
        load_annotations(votes)


def test_a_pair_under_two_prompts_is_an_error(tmp_path: Path) -> None:
    votes = write(tmp_path / "votes.csv", "P1,x,y,ann,a,a,,", "P2,x,y,bob,a,a,,")
    with pytest.raises(DataError, match="votes.csv:3: pair 'x' / 'y' is under prompt 'P2' here"):
        count_votes(load_annotations(votes), votes, None)


def test_aggregate_votes_reads_the_annotate_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # three annotators on three pairs: 3-0 (strong), 2-1 with ann's skip elsewhere, a split
    votes = write(
        tmp_path / "votes.csv",
        "P1,x,y,ann,a,a,1,",
        "P1,x,y,bob,a,b,1,",
        "P1,x,y,cy,a,a,1,",
        "P1,x,z,ann,b,a,1,",
        "P1,x,z,bob,b,b,1,",
        "P1,x,z,cy,tie,a,1,",
        "P1,y,z,ann,skip,a,,",
    )
    out = tmp_path / "pairs.csv"
    assert main(["data", "aggregate-votes", str(votes), "--out", str(out)]) == 0
    # panel 3: strong needs 2 -> (x, y) a; (x, z) has b 2 of 3 -> strong b
    assert load_pairs(out) == [HumanPair("P1", "x", "y", "a"), HumanPair("P1", "x", "z", "b")]
    printed = capsys.readouterr().out
    assert "annotators" in printed and "skips (not votes)      1" in printed


def test_aggregate_votes_says_when_panels_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    votes = write(
        tmp_path / "votes.csv", "P1,x,y,ann,a,a,,", "P1,x,y,bob,a,a,,", "P1,x,z,ann,b,a,,"
    )
    out = tmp_path / "pairs.csv"
    assert main(["data", "aggregate-votes", str(votes), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--panel-size any" in err
    assert (
        main(["data", "aggregate-votes", str(votes), "--out", str(out), "--panel-size", "any"]) == 0
    )
    assert load_pairs(out) == [HumanPair("P1", "x", "y", "a"), HumanPair("P1", "x", "z", "b")]
    only_skips = write(tmp_path / "skips.csv", "P1,x,y,ann,skip,a,,")
    assert main(["data", "aggregate-votes", str(only_skips), "--out", str(out)]) == 2
    assert "no a/b/tie votes (skips are not votes)" in capsys.readouterr().err
