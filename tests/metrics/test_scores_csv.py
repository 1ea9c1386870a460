"""Scores CSV (`item_id,variant,score,status`): round trip and every kind of bad row."""

from __future__ import annotations

from pathlib import Path

import pytest

from titjudge.data.scores import load_scores, scores_by_variant, status_counts, write_scores
from titjudge.errors import DataError
from titjudge.records.items import ScoreRow
from titjudge.records.origins import StatusCounts

ROWS = [
    ScoreRow("p1_a", "tit", 0.1 + 0.2, "ok"),  # 0.30000000000000004 must survive
    ScoreRow("p1_b", "tit", None, "failed"),
    ScoreRow("p1_a", "llm", 7.0, "fallback"),
    ScoreRow("p1_b", "llm", -1e-300, "ok"),
]


def test_round_trip_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "out" / "scores.csv"
    write_scores(ROWS, path)
    assert load_scores(path) == ROWS
    assert path.read_text().splitlines()[:3] == [
        "item_id,variant,score,status",
        "p1_a,tit,0.30000000000000004,ok",
        "p1_b,tit,,failed",
    ]
    assert not (tmp_path / "out" / "scores.csv.tmp").exists()


def test_grouping_skips_failed_and_counts_statuses() -> None:
    assert scores_by_variant(ROWS) == {
        "tit": {"p1_a": 0.1 + 0.2},
        "llm": {"p1_a": 7.0, "p1_b": -1e-300},
    }
    assert scores_by_variant(ROWS, round_digits=1)["tit"] == {"p1_a": 0.3}
    with pytest.raises(DataError, match="item 'p1_a' has two 'tit' scores"):
        scores_by_variant([*ROWS, ScoreRow("p1_a", "tit", None, "failed")])
    assert status_counts(ROWS) == {
        "tit": StatusCounts(ok=1, failed=1),
        "llm": StatusCounts(ok=1, fallback=1),
    }


def test_write_refuses_inconsistent_rows(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="only 'failed' rows have no score"):
        write_scores([ScoreRow("a", "v", None, "ok")], tmp_path / "s.csv")


def test_loader_tolerates_extra_columns_case_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("variant,item_id,status,score,note\n\nv, a ,OK,0.5,hi\nv,b,failed,,\n")
    assert load_scores(path) == [ScoreRow("a", "v", 0.5, "ok"), ScoreRow("b", "v", None, "failed")]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("a,v,0.5,good\n", "s.csv:3: status must be one of ok, failed, fallback; got 'good'"),
        ("a,v,,ok\n", "s.csv:3: status 'ok' needs a score, 'score' is empty"),
        ("a,v,0.5,failed\n", "s.csv:3: status 'failed' must leave 'score' empty, got '0.5'"),
        ("a,v,high,ok\n", "s.csv:3: score 'high' is not a number"),
        ("a,v,nan,ok\n", "s.csv:3: score 'nan' is not finite"),
        ("a,v,inf,fallback\n", "s.csv:3: score 'inf' is not finite"),
        (",v,0.5,ok\n", "s.csv:3: field 'item_id' is empty"),
        ("a,,0.5,ok\n", "s.csv:3: field 'variant' is empty"),
        ("a,v,0.5\n", "s.csv:3: expected 4 fields"),
        ("z,w,0.6,ok\n", "s.csv:3: item 'z' has a second 'w' score (first at line 2)"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "s.csv"
    path.write_text("item_id,variant,score,status\nz,w,1,ok\n" + body)
    with pytest.raises(DataError) as caught:
        load_scores(path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load_scores(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="empty"):
        load_scores(empty)
    header = tmp_path / "header.csv"
    header.write_text("item_id,variant,value,status\n")
    with pytest.raises(DataError, match="header.csv:1: missing column"):
        load_scores(header)
