"""The audit page draws the length breakdown: its table rows and the PNG, embedded."""

from __future__ import annotations

import base64
import json
import re

import pytest

from titjudge.cli import main

# every test reads a whole run made for it (modes_run, offline_runs in conftest.py)
pytestmark = pytest.mark.slow


def test_audit_page_embeds_the_length_breakdown(modes_run, tmp_path, capsys):
    page = tmp_path / "audit.html"
    assert main(["audit", str(modes_run), "--html", str(page)]) == 0
    text = page.read_text()
    found = re.search(r'<script type="application/json" id="audit-data">(.*?)</script>', text, re.S)
    assert found is not None
    length = json.loads(found.group(1))["length"]
    written = json.loads((modes_run / "metrics.json").read_text())
    human = written["settings"]["n_human_pairs"] + written["settings"]["n_human_ties"]
    for name, entry in written["variants"].items():
        rows = [r for r in length["rows"] if r[1] == name]
        assert len(rows) == 4
        assert sum(r[2] for r in rows) == human
        assert sum(r[3] for r in rows) == entry["n_pairs"]
    assert length["plot"].startswith("data:image/png;base64,")
    png = base64.b64decode(length["plot"].removeprefix("data:image/png;base64,"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'id="length-plot"' in text
