"""`batch: true` on an ablation grid: each row's describer (and its LMM Score and Self-Eval
calls) and the LLM judge go through the OpenAI batch double, and the grid's tables are the
ones an online grid gives over the same answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from doubles.batch_server import BatchServer
from doubles.server import FakeOpenAIServer
from run_dirs import latest_run
from test_ablation_grid import grid_config

from titjudge.cli import main

MODELS = ("vlm-sharp", "vlm-blurry", "judge-llm")


def _grid(bench: Path, tmp: Path, url: str, batch: bool) -> str:
    raw: dict[str, Any] = grid_config(bench, url, tmp)
    if batch:
        for section in [*raw["describers"], raw["comparers"][-1]]:
            section.update(batch=True, batch_poll=0.05)
    path = tmp / "grid.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return str(path)


def _cells(tmp: Path) -> dict[str, Any]:
    """Each row's metrics per comparer, as ablation.json records them."""
    found = json.loads((latest_run(tmp / "runs" / "grid") / "ablation.json").read_text())
    return {row["name"]: row["cells"] for row in found["rows"]}


def test_a_batch_grid_gives_the_online_grids_tables(
    bench, make_grid_responder, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    batch_dir, online_dir = tmp_path / "batch", tmp_path / "online"
    batch_dir.mkdir()
    online_dir.mkdir()
    with BatchServer(responder=make_grid_responder(), models=MODELS) as server:
        assert main(["ablation", _grid(bench, batch_dir, server.url, batch=True)]) == 0
        assert server.stats.total == 0  # every call of the grid went as a batch line
        assert server.batch_creates >= 2 and server.lines_answered > 0
    with FakeOpenAIServer(responder=make_grid_responder(), models=MODELS) as server:
        assert main(["ablation", _grid(bench, online_dir, server.url, batch=False)]) == 0
        online_calls = server.stats.total
    assert online_calls > 0
    cells = _cells(batch_dir)
    assert set(cells) == {"sharp", "blurry"} and all(cells.values())
    assert cells == _cells(online_dir)
    rows = latest_run(batch_dir / "runs" / "grid") / "rows"
    sharp = json.loads((rows / "sharp" / "summary.json").read_text())
    assert sharp["batch"]["litellm:openai/vlm-sharp"]["answered"] > 0
    assert "sent_online" not in sharp["batch"]["litellm:openai/vlm-sharp"]
