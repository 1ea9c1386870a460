"""An ablation grid's rows packed one by one (`titjudge pack GRID/rows/<row>`): each row's
every number re-derived from its pack alone, and equal to the grid's own record of it."""

from __future__ import annotations

import json

from titjudge.cli import main


def test_each_row_of_a_grid_packs_and_reproduces(plain_grid, tmp_path, capsys, monkeypatch):
    rows = sorted(p for p in (plain_grid.out / "rows").iterdir() if p.is_dir())
    assert len(rows) == 2
    grid = json.loads((plain_grid.out / "ablation.json").read_text())
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for row in rows:
        pack = tmp_path / f"{row.name}.tjpack"
        assert main(["pack", str(row), "-o", str(pack)]) == 0
        assert main(["reproduce", str(pack), "--out", str(tmp_path / row.name)]) == 0
        assert "every number matches" in capsys.readouterr().out
        again = json.loads((tmp_path / row.name / "run" / "metrics.json").read_text())
        recorded = next(r for r in grid["rows"] if r["name"] == row.name)["metrics"]
        for name, variant in recorded["variants"].items():  # the grid's cells, re-derived
            assert again["variants"][name]["pairwise_accuracy"] == variant["pairwise_accuracy"]
