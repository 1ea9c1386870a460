"""ablation.json is one typed record (`records.grid_record.GridRecord`), written and read by
it (issue 49): the grid writes it, `runs list` reads it typed; an older grid's file (before
cells had an origin, the grid a budget or an exit code: e42ef2e, 19114c0) still reads, and a
file that does not fit is one line naming it."""

from __future__ import annotations

import json

import pytest

from titjudge.errors import DataError
from titjudge.records.grid_record import GridCell, GridRecord, GridRow

#: ablation.json as the grid wrote it before origins, budgets and exit codes were recorded
OLDER = {
    "name": "grid",
    "columns": [{"name": "lexical", "label": "Lexical", "kind": "lexical", "model": None}],
    "disabled_columns": [],
    "shown_columns": ["lexical"],
    "shown_rows": ["sharp"],
    "thresholds": None,
    "rows": [
        {
            "name": "sharp",
            "label": "Sharp",
            "model": "replay:d.jsonl",
            "run_dir": "rows/sharp",
            "status": "ok",
            "error": None,
            "n_items": 4,
            "n_failed_items": 0,
            "cells": {"lexical": {"pairwise_accuracy": 0.75, "n_pairs": 4, "n_items": 4}},
            "metrics": {},
        }
    ],
    "notes": ["a note"],
}


def test_a_grid_record_is_written_and_read_back_field_for_field(tmp_path):
    cell = GridCell(pairwise_accuracy=0.5, n_pairs=10, markable=True, origin={"fallback": 0.1})
    record = GridRecord(
        name="g", rows=[GridRow(name="r", status="ok", cells={"c": cell})], exit_code=4
    )
    path = record.write(tmp_path)
    assert GridRecord.read(tmp_path) == record
    written = json.loads(path.read_text())
    assert list(written) == list(GridRecord.model_fields)  # every key, in the written order
    assert written["rows"][0]["cells"]["c"]["n_pairs"] == 10


def test_an_older_grid_file_reads_with_what_it_did_not_record_unset(tmp_path):
    (tmp_path / "ablation.json").write_text(json.dumps(OLDER))
    record = GridRecord.read(tmp_path)
    cell = record.rows[0].cells["lexical"]
    assert (cell.pairwise_accuracy, cell.n_pairs, cell.origin) == (0.75, 4, None)
    assert record.budget is None and record.exit_code is None and record.marks is None
    assert record.columns[0].label == "Lexical" and record.notes == ["a note"]


@pytest.mark.parametrize(
    ("doc", "where"),
    [({"rows": "sharp"}, "rows"), ({"rows": [{"status": "done"}]}, "rows.0.status")],
)
def test_a_grid_file_that_does_not_fit_is_one_line(tmp_path, doc, where):
    (tmp_path / "ablation.json").write_text(json.dumps(doc))
    with pytest.raises(DataError) as raised:
        GridRecord.read(tmp_path)
    message = str(raised.value)
    assert "\n" not in message and str(tmp_path / "ablation.json") in message and where in message
