"""The session: own orders per annotator, answers on disk before they return, undo, resume."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from titjudge.annotate.session import Refused
from titjudge.data.annotations import load_annotations
from titjudge.errors import DataError


def answer(session: Any, name: str, answer: str = "left", seconds: float | None = 1.0) -> Any:
    shown = session.next_pair(name)
    return asyncio.run(session.answer(name, shown.pair.pair_id, answer, seconds))


def test_orders_are_per_annotator_and_stable(make_session: Callable[..., Any]) -> None:
    session = make_session()
    ann = [(s.pair.pair_id, s.left) for s in session.order("ann")]
    assert len(ann) == 50 and len({p for p, _ in ann}) == 50
    assert ann == [(s.pair.pair_id, s.left) for s in make_session().order("ann")]
    assert [p for p, _ in ann] != [s.pair.pair_id for s in session.order("bob")]
    assert ann != [(s.pair.pair_id, s.left) for s in make_session(seed=1).order("ann")]
    sides = Counter(left for _, left in ann)
    assert sides["a"] > 10 and sides["b"] > 10  # left/right randomised, not always a


def test_each_answer_is_in_the_file_when_it_returns(
    make_session: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session()
    votes = tmp_path / "votes.csv"
    expected = []
    for choice in ("left", "right", "tie", "skip"):
        shown = session.next_pair("ann")
        row = answer(session, "ann", choice, 2.5)
        mapped = {"left": shown.left, "right": "b" if shown.left == "a" else "a"}
        assert row.choice == mapped.get(choice, choice)
        assert row.shown_left == shown.left and row.seconds == 2.5
        expected.append(row)
        on_disk = [r for _, r in load_annotations(votes)]
        assert [(r.item_a, r.item_b, r.choice, r.shown_left) for r in on_disk] == [
            (r.item_a, r.item_b, r.choice, r.shown_left) for r in expected
        ]
    assert session.done("ann") == 4 and session.done("bob") == 0


def test_concurrent_answers_all_land_as_whole_lines(
    make_session: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session()

    async def everyone() -> None:
        calls = [
            session.answer(f"annotator {n}", shown.pair.pair_id, "tie", 0.5)
            for n in range(6)
            for shown in session.order(f"annotator {n}")[:25]
        ]
        await asyncio.gather(*calls)

    asyncio.run(everyone())
    rows = [r for _, r in load_annotations(tmp_path / "votes.csv")]
    assert len(rows) == 150
    assert Counter(r.annotator for r in rows) == {f"annotator {n}": 25 for n in range(6)}


def test_refusals(make_session: Callable[..., Any]) -> None:
    session = make_session()
    pair_id = session.next_pair("ann").pair.pair_id
    cases: list[tuple[tuple[Any, ...], str]] = [
        (("ann", "P1_m1|nope", "left", 1.0), "unknown pair"),
        (("ann", "../../etc/passwd", "left", 1.0), "unknown pair"),
        (("ann", pair_id, "a", 1.0), "answer must be one of"),
        (("ann", pair_id, "left", -3), "seconds must be between"),
        (("ann", pair_id, "left", float("nan")), "seconds must be between"),
        (("ann", pair_id, "left", "1"), "seconds must be a number"),
        (("", pair_id, "left", 1.0), "annotator name"),
        (("a\u2028b", pair_id, "left", 1.0), "annotator name"),
        (("x" * 65, pair_id, "left", 1.0), "annotator name"),
        ((["ann"], pair_id, "left", 1.0), "annotator name must be text"),
    ]
    for call, message in cases:
        with pytest.raises(Refused, match=message) as refused:
            asyncio.run(session.answer(*call))
        assert refused.value.status == 400
    asyncio.run(session.answer("ann", pair_id, "left", 1.0))
    with pytest.raises(Refused, match="already answered") as twice:
        asyncio.run(session.answer("ann", pair_id, "right", 1.0))
    assert twice.value.status == 409
    assert len(session.rows) == 1


def test_undo_takes_back_the_last_answer_of_that_annotator_only(
    make_session: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session()
    first = answer(session, "ann")
    answer(session, "bob")
    second = answer(session, "ann")
    undone = asyncio.run(session.undo("ann"))
    assert undone == second
    rows = [r for _, r in load_annotations(tmp_path / "votes.csv")]
    assert [(r.annotator, r.item_a, r.item_b) for r in rows] == [
        ("ann", first.item_a, first.item_b),
        ("bob", rows[1].item_a, rows[1].item_b),
    ]
    assert session.next_pair("ann").pair.pair_id == f"{second.item_a}|{second.item_b}"
    asyncio.run(session.undo("ann"))
    with pytest.raises(Refused, match="nothing to undo"):
        asyncio.run(session.undo("ann"))
    assert session.done("bob") == 1


def test_a_restart_resumes_each_annotator_where_they_stopped(
    make_session: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session()
    for _ in range(10):
        answer(session, "ann")
    for _ in range(3):
        answer(session, "bob")
    again = make_session()
    assert again.done("ann") == 10 and again.done("bob") == 3
    assert again.next_pair("ann") == again.order("ann")[10]
    assert again.next_pair("bob") == again.order("bob")[3]
    answer(again, "ann")
    assert len(load_annotations(tmp_path / "votes.csv")) == 14


def test_a_file_without_a_final_newline_is_appended_to_correctly(
    make_session: Callable[..., Any], tmp_path: Path
) -> None:
    votes = tmp_path / "votes.csv"
    answer(make_session(), "ann")
    votes.write_text(votes.read_text().rstrip("\n"))
    answer(make_session(), "ann")
    assert len(load_annotations(votes)) == 2


def test_foreign_rows_are_kept_and_other_files_refused(
    make_session: Callable[..., Any], tmp_path: Path
) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "prompt_id,item_a,item_b,annotator,choice,shown_left,seconds,voted_at\nQ,q1,q2,ann,a,a,1,\n"
    )
    session = make_session()
    assert session.foreign == 1 and session.done("ann") == 0
    answer(session, "ann")
    asyncio.run(session.undo("ann"))
    assert [r.item_a for _, r in load_annotations(votes)] == ["q1"]
    counts = tmp_path / "counts.csv"
    counts.write_text("prompt_id,item_a,item_b,votes_a,votes_b,votes_tie\nP1,x,y,1,0,0\n")
    with pytest.raises(DataError, match="not a votes file of `titjudge annotate`"):
        make_session(counts)
    with pytest.raises(DataError, match="found a folder"):
        make_session(tmp_path)
