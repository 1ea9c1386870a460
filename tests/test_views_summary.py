"""One summary printer per view: `report.render.print_summary` prints a run's record (run,
metrics), the audit has one, `print_audit_summary` (pairs or, without them, items); no second
function of src/ is called `print_summary`."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "titjudge"


def _defined(name_prefix: str) -> list[str]:
    return [
        f"{path.relative_to(SRC)}::{node.name}"
        for path in sorted(SRC.rglob("*.py"))
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef)
        and node.name.startswith(name_prefix)
        and node.name.endswith("summary")
    ]


def test_one_print_summary_and_one_audit_summary() -> None:
    assert _defined("print_") == [
        "report/audit/terminal.py::print_audit_summary",
        "report/render.py::print_summary",
    ]
