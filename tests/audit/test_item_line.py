"""items.jsonl and description-file lines: one record each, shared by writer and reader."""

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from titjudge.errors import DataError
from titjudge.models.local.replay import load_descriptions
from titjudge.records import ItemResult
from titjudge.records.calls import CallResult
from titjudge.records.item_line import ItemLine, item_lines, read_item_lines
from titjudge.records.items import Item, ScoreRow
from titjudge.records.outcomes import Described, JudgeOutcome
from titjudge.records.run_record import RunRecord
from titjudge.report.audit.data import describer_error
from titjudge.report.audit.load import load_items
from titjudge.report.run_dir import write_items


def result(item_id: str, call: CallResult[str] | None, text: str | None) -> ItemResult:
    item = Item(item_id, "p1", "a red cat", Path(f"/img/{item_id}.png"), "m1")
    outcomes = [
        JudgeOutcome(
            "llm",
            "ok",
            score=7,
            rationale="fine",
            tokens_in=9,
            cost=0.002,
            answered_by=["gpt-4o-2024-08-06"],
        ),
        JudgeOutcome("lex", "failed", error="no description"),
    ]
    return ItemResult(item, Described(text, call=call, error=None if text else "cut"), outcomes)


def test_the_lines_a_run_holds_are_the_lines_its_items_file_reads_back(tmp_path):
    """The run record holds the lines it wrote items.jsonl from (`RunRecord.item_lines`);
    a record read from the run dir reads the file. Both are equal, also where a describer
    field says nothing (no thinking tokens, no image fitted, no model named, an empty finish
    reason), which the file leaves out and reading gives as None."""
    quiet = CallResult(
        ok=True, value="d", finish_reason="", thinking_tokens=0, image_fit=[], answered_by="",
        cost=float("nan"),
    )  # fmt: skip
    said = CallResult(
        ok=True, value="d", finish_reason="length", thinking_tokens=4, image_fit=["png -> jpeg"],
        answered_by="gemini-2.5-pro", cost=0.25, latency=1.23456,
    )  # fmt: skip
    held = list(item_lines([result("a", quiet, "desc"), result("b", said, "desc")]))
    write_items(tmp_path, held)
    assert read_item_lines(tmp_path / "items.jsonl") == held
    record = RunRecord(run_dir=tmp_path)
    assert record.item_lines == held  # read from the run dir when not held
    assert [line.score_row() for line in held] == [
        ScoreRow("a", "llm", 7, "ok"), ScoreRow("a", "lex", None, "failed"),
        ScoreRow("b", "llm", 7, "ok"), ScoreRow("b", "lex", None, "failed"),
    ]  # fmt: skip


def test_written_lines_read_back_through_the_same_record(tmp_path):
    cut = CallResult(
        ok=True, value="d", tokens_in=5, tokens_out=7, cost=None, latency=0.123456,
        attempts=2, finish_reason="length", thinking_tokens=3, truncated=True,
        answered_by="gemini-2.5-pro",
    )  # fmt: skip
    plain = CallResult(ok=True, value="d", cost=0.001, finish_reason="stop", cached=True)
    assert (
        write_items(tmp_path, item_lines([result("a", plain, None), result("b", cut, "desc")])) == 4
    )
    raw = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert [(r["item_id"], r["variant"]) for r in raw] == [
        ("a", "llm"), ("a", "lex"), ("b", "llm"), ("b", "lex"),
    ]  # fmt: skip
    assert list(raw[0]) == [
        "item_id", "prompt_id", "t2i_model", "image", "variant", "status", "score", "rationale",
        "error", "details", "raw", "description", "describer", "tokens_in", "tokens_out", "cost",
        "latency", "cached", "answered_by",
    ]  # fmt: skip
    assert raw[0]["answered_by"] == ["gpt-4o-2024-08-06"] and raw[1]["answered_by"] == []
    # a describer's finish reason, thinking tokens, truncation and answering model appear only
    # when they say something
    assert raw[0]["describer"] == {
        "status": "failed", "error": "cut", "tokens_in": 0, "tokens_out": 0, "cost": 0.001,
        "latency": 0.0, "cached": True, "attempts": 0,
    }  # fmt: skip
    assert raw[2]["describer"] == {
        "status": "ok", "error": None, "tokens_in": 5, "tokens_out": 7, "cost": None,
        "latency": 0.1235, "cached": False, "attempts": 2, "finish_reason": "length",
        "thinking_tokens": 3, "truncated": True, "answered_by": "gemini-2.5-pro",
    }  # fmt: skip
    assert raw[0]["score"] == 7 and raw[1]["score"] is None
    items, variants = load_items(tmp_path / "items.jsonl")
    assert variants == ["llm", "lex"]
    assert items["a"].describer_cost == 0.001 and items["b"].describer_cost is None
    llm = items["b"].results["llm"]
    assert (llm.status, llm.score, llm.rationale, llm.cost, llm.tokens_in) == (
        "ok", 7.0, "fine", 0.002, 9,
    )  # fmt: skip
    assert llm.answered_by == ["gpt-4o-2024-08-06"] and items["b"].results["lex"].answered_by == []
    assert items["a"].results["llm"].description is None
    assert describer_error(items["a"].results["llm"]) == "cut"  # shown where the text would be
    assert describer_error(items["b"].results["llm"]) is None
    assert items["b"].results["lex"].error == "no description"


GOOD = {"item_id": "a", "prompt_id": "p", "t2i_model": "m", "variant": "v", "status": "ok"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"item_id": ""}, "field 'item_id' must be a non-empty string, got ''"),
        ({"variant": 3}, "field 'variant' must be a non-empty string, got 3"),
        ({"score": "high"}, "status 'ok' needs a finite number as score, got 'high'"),
        ({"score": float("nan")}, "status 'ok' needs a finite number as score, got nan"),
        ({"status": "failed", "score": 2}, "status 'failed' must have score null, got 2"),
        ({"score": 1, "details": [1]}, "field 'details' must be an object, got list"),
        ({"score": 1, "rationale": 5}, "field 'rationale' must be a string or null, got int"),
        ({"score": 1, "tokens_in": "x"}, "field 'tokens_in': Input should be a valid integer"),
    ],
)
def test_a_malformed_items_line_is_one_clear_error(change, message):
    with pytest.raises(DataError, match="^" + re.escape(f"items.jsonl:4: {message}")):
        ItemLine.parse({**GOOD, "score": 1.5, **change}, "items.jsonl:4")


def test_display_only_fields_are_read_leniently():
    line = ItemLine.parse(
        {**GOOD, "score": 2, "cost": "n/a", "image": 5, "describer": "?", "cached": 1}, "f:1"
    )
    assert (line.cost, line.image, line.describer.cost, line.cached) == (None, "", None, True)


def test_description_lines_match_by_hash_or_by_image_file(tmp_path):
    (tmp_path / "img.png").write_bytes(b"png bytes")
    path = tmp_path / "descriptions.jsonl"
    rows = [
        {"image_sha256": "ab" * 32, "description": "by hash"},
        {"item_id": "i2", "image": "img.png", "description": "by file"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    assert load_descriptions(path) == {
        "ab" * 32: "by hash",
        hashlib.sha256(b"png bytes").hexdigest(): "by file",
    }


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"image": "img.png"}, "missing 'description'"),
        ({"image": "img.png", "description": "  "}, "missing 'description'"),
        ({"description": "x"}, "needs 'image_sha256' or 'image'"),
        ({"image": "gone.png", "description": "x"}, "image 'gone.png' not found"),
    ],
)
def test_a_malformed_description_line_names_file_and_line(tmp_path, row, message):
    path = tmp_path / "descriptions.jsonl"
    good = json.dumps({"image_sha256": "cd" * 32, "description": "ok"})
    path.write_text(good + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="^" + re.escape(f"{path}:2: {message}")):
        load_descriptions(path)


def test_a_skipped_description_is_written_as_skipped_not_failed(tmp_path):
    """No judge reads descriptions (an lmm-only config): the describer line says skipped, with
    the reason, and the audit does not show it as a describer failure."""
    item = Item("a", "p1", "a red cat", Path("/img/a.png"), "m1")
    outcome = JudgeOutcome("lmm", "ok", score=80, rationale="matches")
    write_items(tmp_path, item_lines([ItemResult(item, Described.skipped(), [outcome])]))
    line = json.loads((tmp_path / "items.jsonl").read_text())
    assert line["describer"]["status"] == "skipped"
    assert line["describer"]["error"] == "not needed: no judge reads descriptions"
    assert line["status"] == "ok" and line["description"] is None
    items, _ = load_items(tmp_path / "items.jsonl")
    assert describer_error(items["a"].results["lmm"]) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
def test_a_description_line_whose_image_is_a_fifo_names_it_without_opening_it(tmp_path):
    """The image is hashed to key the description: a FIFO blocked that read (issue 48)."""
    os.mkfifo(tmp_path / "pipe.png")
    path = tmp_path / "descriptions.jsonl"
    path.write_text(json.dumps({"image": "pipe.png", "description": "x"}) + "\n")
    message = f"{path}:1: image 'pipe.png' is a FIFO (named pipe), not a regular file"
    with pytest.raises(DataError, match="^" + re.escape(message)):
        load_descriptions(path)
