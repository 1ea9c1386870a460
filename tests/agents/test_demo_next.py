"""The demo's next step (issue 37, the first hour): the real TIT-Score-LLM is estimated first,
with its expected cost when the shipped config is at hand (the same numbers `titjudge estimate`
gives), then run on a few items with `--limit` before the rest."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from titjudge.cli import main
from titjudge.cli.demo import FIRST_ITEMS, GEMINI_CONFIG, _print_next

REPO = Path(__file__).resolve().parents[2]


def next_step(data: Path) -> list[str]:
    console = Console(record=True, width=400)
    _print_next(console, data)
    return console.export_text().splitlines()


@pytest.mark.slow
def test_the_next_step_estimates_its_cost_then_runs_a_few_items(synthetic, tmp_path, monkeypatch):
    data = synthetic(3, 4)  # 12 items: more than the first run's 8
    (tmp_path / "configs").mkdir()
    shutil.copy(REPO / GEMINI_CONFIG, tmp_path / GEMINI_CONFIG)
    monkeypatch.chdir(tmp_path)
    lines = next_step(data)
    sets = (
        f"--set data.manifest={data / 'manifest.jsonl'} --set data.human_pairs={data / 'pairs.csv'}"
    )
    estimate = lines.index(f"  titjudge estimate {GEMINI_CONFIG} {sets}")
    run = lines.index(f"  titjudge run {GEMINI_CONFIG} {sets} --limit {FIRST_ITEMS}")
    assert estimate < run and lines.index("  export GEMINI_API_KEY=...") < run
    cost = re.fullmatch(
        r"expected: \$(\d+\.\d\d) for the first 8 items, \$(\d+\.\d\d) for all 12 "
        r"\(at most \$(\d+\.\d\d), every call at its caps\)",
        lines[estimate + 1],
    )
    assert cost is not None, lines[estimate + 1]
    first, every, worst = (float(x) for x in cost.groups())
    assert 0 < first < every <= worst


def test_the_numbers_are_the_estimate_commands(synthetic, tmp_path, monkeypatch, capsys):
    data = synthetic(3, 4)
    (tmp_path / "configs").mkdir()
    shutil.copy(REPO / GEMINI_CONFIG, tmp_path / GEMINI_CONFIG)
    monkeypatch.chdir(tmp_path)
    said = next(line for line in next_step(data) if line.startswith("expected: "))
    sets = ["--set", f"data.manifest={data / 'manifest.jsonl'}"]
    sets += ["--set", f"data.human_pairs={data / 'pairs.csv'}"]
    capsys.readouterr()
    assert main(["estimate", str(GEMINI_CONFIG), *sets, "--json"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert main(["estimate", str(GEMINI_CONFIG), *sets, "--json", "--limit", "8"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert said == (
        f"expected: ${first['usd']:.2f} for the first 8 items, ${every['usd']:.2f} for all 12 "
        f"(at most ${every['usd_max']:.2f}, every call at its caps)"
    )


def test_without_the_shipped_config_the_commands_stand_alone(synth_data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configs/ here
    lines = next_step(synth_data)
    assert not any(line.startswith("expected: ") for line in lines)
    assert any(line.startswith(f"  titjudge estimate {GEMINI_CONFIG} ") for line in lines)
    assert any(line.endswith(f" --limit {FIRST_ITEMS}") for line in lines)
