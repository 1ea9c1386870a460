"""Real run dirs for the tests of the commands that read them: titjudge itself runs the
SYNTHETIC benchmark offline (replayed descriptions, the lexical judge), once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import builders
import pytest

import titjudge


@pytest.fixture(scope="session")
def made_run(synth_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run with human pairs: config.yaml, items.jsonl, scores.csv, metrics.json,
    summary.json and files.json. A test must not change it (copy it: `run_copy`)."""
    tmp = tmp_path_factory.mktemp("made-run")
    replay = builders.replay_describer(synth_data / "descriptions.jsonl")
    return titjudge.evaluate(builders.run_config(synth_data, tmp, describer=replay)).run_dir


@pytest.fixture
def run_copy(made_run: Path, tmp_path: Path) -> Path:
    """A private copy of `made_run`, to damage."""
    return Path(shutil.copytree(made_run, tmp_path / "run"))
