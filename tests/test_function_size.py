"""No function in src/titjudge over 100 lines or with more than 8 parameters (issue 49).

Lines count from the `def` line to the function's last line, docstring included; parameters
are every positional, keyword-only, `*args` and `**kwargs` one but `self` and `cls`."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "titjudge"
MAX_LINES, MAX_PARAMETERS = 100, 8


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((f"{path.relative_to(SRC)}::{node.name}", node))
    return found


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return (
        len([n for n in named if n not in ("self", "cls")]) + bool(args.vararg) + bool(args.kwarg)
    )


def test_no_function_is_over_100_lines():
    long = [
        (name, node.end_lineno - node.lineno + 1)
        for name, node in _functions()
        if node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]
    assert not long, f"functions over {MAX_LINES} lines: {long}"


def test_no_function_takes_more_than_8_parameters():
    wide = [(name, n) for name, node in _functions() if (n := _parameters(node)) > MAX_PARAMETERS]
    assert not wide, f"functions with more than {MAX_PARAMETERS} parameters: {wide}"


def test_one_function_is_named_evaluate_the_public_one():
    named = [name for name, node in _functions() if node.name == "evaluate"]
    assert named == ["__init__.py::evaluate"]
