"""Run dirs for the audit tests: the hand-written one with known answers (audit_run.py) and
real pipeline runs."""

from __future__ import annotations

from pathlib import Path

import builders
import pytest
from audit_run import write_run


@pytest.fixture(scope="session")
def handmade_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("audit-handmade"))


@pytest.fixture(scope="session")
def pipeline_run(tmp_path_factory: pytest.TempPathFactory, synthetic: builders.Synthetic) -> Path:
    """A real run: SYNTHETIC 5 prompts x 5 models (50 pairs), replay describer, lexical judge;
    its benchmark copied beside it (the run's parent/data)."""
    from titjudge.cli.demo import demo_config
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.run.runner import run

    root = tmp_path_factory.mktemp("audit-pipeline")
    builders.copy_data(synthetic(5, 5, seed=3), root)
    config = validate_config(demo_config(root / "data", root, None), RunConfig, "audit test config")
    return run(config, out=root / "run").run_dir


@pytest.fixture(scope="session")
def nopairs_run(tmp_path_factory: pytest.TempPathFactory, synthetic: builders.Synthetic) -> Path:
    """A real run without human pairs: SYNTHETIC 3 prompts x 4 models, replay describer,
    lexical judge, the config's data.human_pairs and data.ranks removed; its benchmark copied
    beside it."""
    from titjudge.cli.demo import demo_config
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.run.runner import run

    root = tmp_path_factory.mktemp("audit-nopairs")
    builders.copy_data(synthetic(3, 4, seed=5), root)
    raw = demo_config(root / "data", root, None)
    del raw["data"]["human_pairs"], raw["data"]["ranks"]
    config = validate_config(raw, RunConfig, "audit test config")
    return run(config, out=root / "run").run_dir
