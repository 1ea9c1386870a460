"""`batch: true` on an ablation grid: each row's describer (and its LMM Score and Self-Eval
calls) and the LLM judge go through the OpenAI batch double, and the grid's tables are the
ones an online grid gives over the same answers (the shared `plain_grid`: the same config
without `batch`, on the same benchmark and responder)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from ablation_grids import grid_config
from doubles.batch_server import BatchServer
from run_dirs import latest_run

from titjudge.cli import main

MODELS = ("vlm-sharp", "vlm-blurry", "judge-llm")


def _grid(bench: Path, tmp: Path, url: str) -> str:
    raw: dict[str, Any] = grid_config(bench, url, tmp)
    for section in [*raw["describers"], raw["comparers"][-1]]:
        section.update(batch=True, batch_poll=0.05)
    path = tmp / "grid.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return str(path)


def _cells(grid_dir: Path) -> dict[str, Any]:
    """Each row's metrics per comparer, as ablation.json records them."""
    found = json.loads((grid_dir / "ablation.json").read_text())
    return {row["name"]: row["cells"] for row in found["rows"]}


@pytest.mark.slow
def test_a_batch_grid_gives_the_online_grids_tables(
    bench, make_grid_responder, plain_grid, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with BatchServer(responder=make_grid_responder(), models=MODELS) as server:
        assert main(["ablation", _grid(bench, tmp_path, server.url)]) == 0
        assert server.stats.total == 0  # every call of the grid went as a batch line
        assert server.batch_creates >= 2 and server.lines_answered > 0
    assert plain_grid.calls > 0  # the online grid asked its server
    grid_dir = latest_run(tmp_path / "runs" / "grid")
    cells = _cells(grid_dir)
    assert set(cells) == {"sharp", "blurry"} and all(cells.values())
    assert cells == _cells(plain_grid.out)
    sharp = json.loads((grid_dir / "rows" / "sharp" / "summary.json").read_text())
    assert sharp["batch"]["litellm:openai/vlm-sharp"]["answered"] > 0
    assert "sent_online" not in sharp["batch"]["litellm:openai/vlm-sharp"]
