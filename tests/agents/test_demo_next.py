"""The demo's next step (issue 37, the first hour): the real TIT-Score-LLM is estimated first,
with its expected cost (the same numbers `titjudge estimate` gives), then run on a few items
with `--limit` before the rest. Its config is the shipped one, copied from the installed
package into the demo's folder, so the commands work from any directory."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from titjudge.cli import main
from titjudge.cli.demo import FIRST_ITEMS, GEMINI_CONFIG, _print_next, write_next_config

REPO = Path(__file__).resolve().parents[2]


def next_step(data: Path, out: Path) -> tuple[list[str], Path]:
    """The next step's lines, the demo having written its config into `out`."""
    console = Console(record=True, width=400)
    config = write_next_config(out)
    _print_next(console, data, config)
    return console.export_text().splitlines(), config


@pytest.mark.slow
def test_the_next_step_estimates_its_cost_then_runs_a_few_items(synthetic, tmp_path, monkeypatch):
    data = synthetic(3, 4)  # 12 items: more than the first run's 8
    monkeypatch.chdir(tmp_path)  # no configs/ here: the demo's own copy is used
    lines, config = next_step(data, tmp_path / "demo")
    sets = ["--set", f"data.manifest={data / 'manifest.jsonl'}"]
    sets += ["--set", f"data.human_pairs={data / 'pairs.csv'}"]
    commands = [shlex.split(line) for line in lines]
    estimate = commands.index(["titjudge", "estimate", str(config), *sets])
    run = commands.index(["titjudge", "run", str(config), *sets, "--limit", str(FIRST_ITEMS)])
    assert lines.index("  export GEMINI_API_KEY=...") < estimate < run
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
    monkeypatch.chdir(tmp_path)
    # the next step exports the key first: estimate runs the run's preflight (issue 48)
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSy-demo-next")
    lines, config = next_step(data, tmp_path / "demo")
    said = next(line for line in lines if line.startswith("expected: "))
    sets = ["--set", f"data.manifest={data / 'manifest.jsonl'}"]
    sets += ["--set", f"data.human_pairs={data / 'pairs.csv'}"]
    capsys.readouterr()
    assert main(["estimate", str(config), *sets, "--json"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert main(["estimate", str(config), *sets, "--json", "--limit", "8"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert said == (
        f"expected: ${first['usd']:.2f} for the first 8 items, ${every['usd']:.2f} for all 12 "
        f"(at most ${every['usd_max']:.2f}, every call at its caps)"
    )


def test_the_next_config_is_the_shipped_one_whatever_the_directory(tmp_path, monkeypatch):
    """The installed package carries the shipped configs (package data); the demo copies the
    next step's, byte for byte, so a pip-installed titjudge has it as a checkout does."""
    monkeypatch.chdir(tmp_path)  # no checkout here
    written = write_next_config(tmp_path / "demo")
    assert written == tmp_path / "demo" / GEMINI_CONFIG
    assert written.read_bytes() == (REPO / "configs" / GEMINI_CONFIG).read_bytes()
