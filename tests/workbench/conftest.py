"""Runs for the workbench tests: two real runs of one config with its judge swapped (a
lexical judge, then an LLM judge answered by the loopback OpenAI stand-in), kept as
`titjudge run` keeps them under <run.out>/<name>/<run id>/."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import builders
import pytest
from doubles.server import FakeOpenAIServer


def _run(raw: dict[str, Any]) -> Path:
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.run.runner import run

    return run(validate_config(raw, RunConfig, "workbench test config")).run_dir


@pytest.fixture(scope="session")
def swapped(tmp_path_factory: pytest.TempPathFactory, synthetic: builders.Synthetic) -> Path:
    """The run.out folder holding the two runs of config `swap` (4 prompts x 4 models, 24
    pairs): first `judge` is lexical, then an LLM judge (kind llm)."""
    from titjudge.cli.demo import demo_config

    root = tmp_path_factory.mktemp("workbench")
    builders.copy_data(synthetic(4, 4, seed=7), root)
    base = demo_config(root / "data", root, None)
    base["name"] = "swap"
    first = copy.deepcopy(base)
    first["judges"] = [{"name": "judge", "kind": "lexical"}]
    _run(first)
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer(responder="judge") as server:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        second = copy.deepcopy(base)
        second["judges"] = [
            {
                "name": "judge",
                "kind": "llm",
                "model": "litellm:openai/judge",
                "api_base": server.url,
            }
        ]
        _run(second)
    return root / "runs"


@pytest.fixture(scope="session")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the audit tests' hand-written run (tests/audit/audit_run.py): hostile
    rationale text, a fallback judge, a failed item, an image file missing."""
    from audit.audit_run import write_run

    root = tmp_path_factory.mktemp("workbench-hostile")
    write_run(root)
    return root / "run"
