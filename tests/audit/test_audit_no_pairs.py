"""`titjudge audit` on a run without human pairs: it opens and shows items, descriptions and
rationales (terminal and page data), and says why pair views are unavailable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundle_doc import audit_bundle

from titjudge.cli import main
from titjudge.report.audit.load import load_audit

# every test reads a whole run made for it (nopairs_run in conftest.py)
pytestmark = pytest.mark.slow


def _lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "items.jsonl").read_text().splitlines()]


def test_overview_lists_items_and_mean_scores(
    nopairs_run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["audit", str(nopairs_run), "--limit", "5"]) == 0
    out = capsys.readouterr().out
    lines = _lines(nopairs_run)
    assert "12 items, no human pairs" in out
    mean = sum(line["score"] for line in lines) / len(lines)
    assert f"{mean:.4g}" in out
    assert "items (first 5)" in out
    assert all(line["item_id"] in out for line in lines[:5])
    assert lines[5]["item_id"] not in out
    assert "--item ITEM_ID" in out


def test_item_view_shows_prompt_description_and_rationale(
    nopairs_run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "4000")  # one line per text, so whole texts can be found
    line = _lines(nopairs_run)[7]
    assert main(["audit", str(nopairs_run), "--item", line["item_id"]]) == 0
    out = capsys.readouterr().out
    assert line["description"] in out
    assert line["rationale"] in out
    assert f"score {line['score']:.4g}" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pair", "a|b"], "the run has no human pairs"),
        (["--disagreements"], "the run has no human pairs"),
        (["--item", "nope"], "no item 'nope' in this run"),
    ],
)
def test_pair_views_and_unknown_items_exit_2(
    nopairs_run: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["audit", str(nopairs_run), *args]) == 2
    assert message in capsys.readouterr().err


def test_page_data_holds_every_item_with_its_texts(nopairs_run: Path, tmp_path: Path) -> None:
    data = load_audit(nopairs_run)
    assert data.pairs == [] and len(data.items) == 12
    bundle = audit_bundle(nopairs_run, tmp_path / "page")
    assert bundle["rows"] == [] and bundle["pairs"] == {} and bundle["pictures"] == {}
    rows = bundle["items"]["r1"]
    assert [row["item_id"] for row in rows] == list(data.items)
    pages = bundle["item_pages"]["r1"]
    for line in _lines(nopairs_run):
        page = pages[line["item_id"]]
        (variant,) = page["variants"]
        assert page["description"] == line["description"]
        assert (variant["rationale"], variant["score"]) == (line["rationale"], line["score"])
        assert page["url"] is not None and (tmp_path / "page" / page["url"]).is_file()
    (run,) = bundle["runs"]["runs"]
    assert run["variants"] == [] and run["items"] == 12  # no pairs: no accuracy to show
