"""The folders show the flow (issue 49): `agents/` holds the LangGraph graph, its agents (the
describe, judge, fallback, pairwise and evaluator nodes, over the item steps) and the driver
(`graph.drive`), and nothing else; what a run does around the graph (its context, preflight,
runner, score, estimate, explain) is `titjudge.run`, layered above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "titjudge"

#: the graph (graph.py: the run graph and `drive`), the item graph's nodes (nodes.py) over the
#: item steps (item.py, judges gathered by gather.py), the cached pass (cached.py), the pairwise
#: and evaluator nodes (finish.py) and the batch phase `drive` runs first (batch_phase.py)
AGENTS = {"__init__", "graph", "nodes", "item", "gather", "cached", "finish", "batch_phase"}


def test_agents_holds_the_graph_its_nodes_and_the_driver_and_nothing_else():
    modules = {path.stem for path in (SRC / "agents").glob("*.py")}
    assert modules == AGENTS, f"agents/ holds {sorted(modules - AGENTS)} besides the graph"
    assert not [p for p in (SRC / "agents").iterdir() if p.is_dir() and p.name != "__pycache__"]


def test_the_driver_is_in_agents_and_the_run_goes_through_it():
    tree = ast.parse((SRC / "agents" / "graph.py").read_text())
    assert "drive" in {n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef)}
    runner = (SRC / "run" / "runner.py").read_text()
    assert "from titjudge.agents.graph import drive" in runner


def test_the_run_package_is_a_layer_above_the_agents():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text())
    layers = config["tool"]["importlinter"]["contracts"][0]["layers"]
    assert layers.index("titjudge.run") == layers.index("titjudge.agents") - 1


def _calls(path: Path) -> set[str]:
    """The names a module calls (`f(...)`, `x.f(...)` as `f`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            found.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return found


def test_score_goes_through_the_driver():
    calls = _calls(SRC / "run" / "score.py")
    assert "drive" in calls and "build_item_graph" not in calls


def test_the_cached_node_calls_the_item_route_and_restates_none_of_it():
    calls = _calls(SRC / "agents" / "cached.py")
    assert "answer" in calls
    assert not calls & {"describe", "judge", "fallback", "finish"}


def test_the_runner_builds_no_summary_and_writes_config_yaml_once():
    runner = SRC / "run" / "runner.py"
    calls = _calls(runner)
    assert "RunSummary" not in calls and "build_summary" in calls
    writes = [
        path
        for path in SRC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "write_config"
    ]
    assert writes == [runner]
    text = runner.read_text()
    assert text.count("write_config(") == 1


def test_the_reports_take_strict_json_from_files_not_from_the_metrics():
    for path in (SRC / "report").rglob("*.py"):
        assert "metrics.summary import to_json" not in path.read_text(), path


def test_config_yaml_is_read_through_its_record_alone():
    """Every view reads a run's config.yaml typed (`records.run_config.RunConfigFile`); the
    other YAML readers read configs a user wrote (run and ablation through
    `config.load.load_configured`, estimate's)."""
    readers = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if "load_yaml(" in path.read_text() and path.name != "files.py"
    }
    assert readers == {
        "records/run_config.py",
        "config/load.py",
        "cli/estimate.py",
    }
