"""Each concept of the house has one type: no class name is defined in two titjudge
modules, so `PairVerdict` (a pairwise judge's verdict on one pair, from the judge that makes
it to the audit that shows it) or `Thresholds` means one thing wherever it is read. And the
mode a model call runs in travels as an argument, never as a ContextVar in `models/calls/`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import titjudge

SRC = Path(titjudge.__file__).parent


def _classes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(str(path.relative_to(SRC)))
    return found


def test_every_class_name_is_defined_in_one_module() -> None:
    found = _classes()
    twice = {name: where for name, where in found.items() if len(where) > 1}
    assert twice == {}
    assert found["PairVerdict"] == ["records/pairs.py"]
    assert found["RunRecord"] == ["records/run_record.py"]


def test_no_call_reads_its_mode_from_a_context_variable() -> None:
    calls = SRC / "models" / "calls"
    uses = [
        str(path.relative_to(SRC))
        for path in sorted(calls.rglob("*.py"))
        if "ContextVar" in path.read_text(encoding="utf-8")
    ]
    assert uses == []
    assert not list(SRC.rglob("_moved.py"))
