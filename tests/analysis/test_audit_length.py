"""The audit's page (the workbench's bundle, `audit --html DIR`) shows the length
breakdown: `titjudge breakdown --by length`'s rows, with every human pair counted once."""

from __future__ import annotations

import json

import pytest
from bundle_doc import audit_bundle

# every test reads a whole run made for it (modes_run, offline_runs in conftest.py)
pytestmark = pytest.mark.slow


def test_audit_page_embeds_the_length_breakdown(modes_run, tmp_path, capsys):
    bundle = audit_bundle(modes_run, tmp_path / "page")
    length = bundle["pictures"]["r1"]["by_length"]
    written = json.loads((modes_run / "metrics.json").read_text())
    human = written["settings"]["n_human_pairs"] + written["settings"]["n_human_ties"]
    for name, entry in written["variants"].items():
        rows = [r for r in length["rows"] if r["variant"] == name]
        assert len(rows) == 4
        assert sum(r["n_human_pairs"] for r in rows) == human
        assert sum(r["n_pairs"] for r in rows) == entry["n_pairs"]
