"""Building the `titjudge` parser imports no heavy library; every command has its handler."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from titjudge import __version__
from titjudge.cli import build_parser

#: what a handler may import when its command runs, never `titjudge --help`
HEAVY = (
    "torch",
    "transformers",
    "litellm",
    "langgraph",
    "numpy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "pydantic",
    "rich",
    "PIL",
    "scipy",
    "yaml",
    "diskcache",
    "aiohttp",
)

_PROBE = """
import argparse, json, sys
from titjudge.cli import build_parser

def walk(parser):
    parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                walk(child)

walk(build_parser())
heavy = json.loads(sys.argv[1])
print(json.dumps({
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in heavy),
    "titjudge": sorted(m for m in sys.modules if m.startswith("titjudge")),
}))
"""


def _leaves(parser: argparse.ArgumentParser, path: str = "") -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.update(_leaves(child, f"{path} {name}".strip()))
    return found or {path: parser}


def _probe() -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: dict[str, list[str]] = json.loads(done.stdout)
    return loaded


@pytest.mark.slow
def test_building_the_parser_and_every_help_imports_nothing_heavy() -> None:
    assert _probe()["heavy"] == []


@pytest.mark.slow
def test_building_the_parser_imports_only_the_cli_modules() -> None:
    # handlers import the packages they drive (config, data, metrics, ...) when they run
    assert _probe()["titjudge"] == [
        "titjudge",
        "titjudge.cli",
        "titjudge.cli.ablation",
        "titjudge.cli.analysis",
        "titjudge.cli.annotate",
        "titjudge.cli.audit",
        "titjudge.cli.cache",
        "titjudge.cli.common",
        "titjudge.cli.data",
        "titjudge.cli.demo",
        "titjudge.cli.estimate",
        "titjudge.cli.explain",
        "titjudge.cli.metrics",
        "titjudge.cli.run",
        "titjudge.cli.runs",
        "titjudge.cli.study",
        "titjudge.cli.view",
        "titjudge.submodules",  # the packages' lazy submodule attributes (stdlib only)
    ]


def test_every_command_has_a_handler_in_its_cli_module() -> None:
    leaves = _leaves(build_parser())
    assert set(leaves) == {
        "data synth",
        "data aggregate-votes",
        "data rank",
        "data import",
        "metrics",
        "run",
        "score",
        "demo",
        "explain",
        "runs list",
        "runs verify",
        "runs prune",
        "cache stats",
        "cache clear",
        "cache merge",
        "ablation",
        "estimate",
        "audit",
        "compare",
        "export",
        "annotate",
        "view",
        "pack",
        "reproduce",
        "drift",
    }
    for name, parser in leaves.items():
        handler = parser.get_default("func")
        assert callable(handler), name
        assert handler.__module__.startswith("titjudge.cli."), (name, handler.__module__)


@pytest.mark.slow
def test_python_dash_m_titjudge_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "titjudge", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"titjudge {__version__}"
    assert done.stderr == ""


@pytest.mark.slow
def test_metrics_and_ablation_tables_import_no_scipy() -> None:
    # importing scipy.stats cost 1.3-2 s of a fully cached re-run (scipy.special alone
    # ~0.35 s); the metrics compute their few statistics without scipy (metrics.exact)
    probe = (
        "import sys, titjudge.metrics.evaluate, titjudge.ablation.tables;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
