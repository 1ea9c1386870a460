"""The shipped offline grid (configs/ablation-offline.yaml), run the way its header says,
packed, its cache and runs deleted, and reproduced from the pack alone: every row's numbers,
ablation.json and each table file byte for byte.

The grid's own parts, nothing stood in: `titjudge data synth --prompts 12 --models 5`, the
checkpoints `benchmarks/ablation_offline.py models` writes (a tiny random Qwen2.5-VL row
through `hf:`, all-MiniLM-L6-v2 through `embed:` from the demo extra) and its loopback server
playing three VLMs and an LLM judge (`OfflineGridResponder`), here on a free port given by
`--set` instead of the config's 8766 (other work may hold that port). The tiny row fails
cells (its verdicts run into max_tokens: failures, never numbers), so the grid exits 1 and
its pack carries those failures: reproduced as they were."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from doubles.server import FakeOpenAIServer

from titjudge.cli import main

REPO = Path(__file__).resolve().parents[2]
ROWS = ("vlm-sharp", "vlm-blurry", "vlm-glance")
pytestmark = pytest.mark.slow


def offline_helpers():
    spec = importlib.util.spec_from_file_location(
        "ablation_offline_helpers", REPO / "benchmarks" / "ablation_offline.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_offline_grid_packs_and_reproduces_from_the_pack_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    helpers = offline_helpers()
    synth = Path(".titjudge/offline/synth")
    assert main(["data", "synth", "--prompts", "12", "--models", "5", "--out", str(synth)]) == 0
    helpers.build_models(Path(".titjudge/offline/models"))
    responder = helpers.OfflineGridResponder(
        helpers.load_descriptions(synth / "descriptions.jsonl")
    )
    with FakeOpenAIServer(responder, models=(*ROWS, "judge-llm")) as server:
        moved = [f"describers.{row}.api_base={server.url}" for row in ROWS]
        moved.append(f"comparers.tit_llm.api_base={server.url}")
        args = ["ablation", str(REPO / "configs" / "ablation-offline.yaml")]
        for override in moved:
            args += ["--set", override]
        code = main(args)
    said = capsys.readouterr()
    assert code == 1, said.err  # the tiny random row's failed cells, reported
    [grid] = [p for p in Path("runs/ablation-offline").iterdir() if p.is_dir()]
    record = json.loads((grid / "ablation.json").read_text())
    assert {r["name"] for r in record["rows"]} == {*ROWS, "tiny-qwen25-vl"}

    assert main(["pack", str(grid), "-o", "grid.tjpack"]) == 0
    tables = {p.name: p.read_bytes() for p in grid.iterdir() if p.suffix in (".md", ".csv", ".tex")}
    assert "table4.md" in tables
    shutil.rmtree("runs")
    shutil.rmtree(".titjudge")  # the cache, the data and the checkpoints: the pack alone
    capsys.readouterr()
    assert main(["reproduce", "grid.tjpack", "--out", "again"]) == 0, capsys.readouterr().out
    said = capsys.readouterr().out
    assert "ablation.json and the tables" in said
    for name, data in tables.items():
        assert (Path("again/grid") / name).read_bytes() == data, name
