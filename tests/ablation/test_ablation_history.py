"""An ablation grid is kept like a run: `<run.out>/<name>/<run id>/` with its tables and its
rows' run dirs, LATEST naming the last grid to finish; a grid that stops part-way leaves
nothing, and an `--out` that already holds a grid is refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from ablation_grids import grid_config
from run_dirs import latest_run

import titjudge.ablation.grid as grid
from titjudge.ablation.config import AblationConfig
from titjudge.cli import main
from titjudge.config.load import validate_config

# every test makes an ablation grid
pytestmark = pytest.mark.slow


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in folder.rglob("*")
    }


def test_grids_are_kept_and_a_stopped_grid_leaves_nothing(
    bench, grid_server, tmp_path, monkeypatch, capsys
):
    server, _ = grid_server
    raw = grid_config(bench, server.url, tmp_path)
    config = validate_config(raw, AblationConfig, "test grid")
    result = asyncio.run(grid.run_ablation_async(config))
    history = tmp_path / "runs" / "grid"
    found = latest_run(history)
    assert result.out_dir == found and found.parent == history
    assert (found / "table4.csv").is_file() and (found / "ablation.yaml").is_file()
    # each row's run dir is in place, named where it landed (not where it was staged)
    assert sorted(p.name for p in (found / "rows").iterdir()) == ["blurry", "sharp"]
    saved = json.loads((found / "ablation.json").read_text())
    for row in saved["rows"]:
        assert row["run_dir"] == str(found / "rows" / row["name"])
        assert (Path(row["run_dir"]) / "scores.csv").is_file()
    assert sorted(p.name for p in history.iterdir()) == sorted([found.name, "LATEST"])
    # the grid lists its own files (files.json, written last), each row its own
    listed = json.loads((found / "files.json").read_text())["files"]
    assert {"ablation.json", "ablation.yaml", "table4.csv"} <= set(listed)
    assert not any(name.startswith("rows/") for name in listed)
    assert all((Path(row["run_dir"]) / "files.json").is_file() for row in saved["rows"])
    assert main(["runs", "verify", str(history)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 runs checked: 3 hold"

    # the same grid again, stopped while writing its tables: nothing of it is kept
    before = snapshot(tmp_path / "runs")

    def stopped(result):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(grid, "write_outputs", stopped)
        asyncio.run(grid.run_ablation_async(config))
    assert snapshot(tmp_path / "runs") == before

    # --out names the grid dir exactly and never one that holds a grid already
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(raw))
    asked = server.stats.total
    capsys.readouterr()
    assert main(["ablation", str(path), "--out", str(found)]) == 2
    err = capsys.readouterr().err
    assert f"--out {found}: already exists and is not empty" in err
    assert len(err.strip().splitlines()) == 1
    assert snapshot(tmp_path / "runs") == before and server.stats.total == asked
