"""pyproject says Python >= 3.10: the package names nothing that only 3.11 has.

Found on 3.10.13 (docs/dependencies.md): `asyncio.Runner` (new in 3.11) ran every run, and a
retry's wait caught the builtin `TimeoutError`, which `asyncio.wait_for` raises only from
3.11 on (before, `asyncio.TimeoutError` is a class of its own), so every retry after a
transient error ended the call. CI runs 3.11, where neither fails; this check does not
need 3.10 to catch them again."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "titjudge"
#: attributes of these modules that Python 3.10 does not have
NEW_IN_311 = {
    "asyncio": {"Runner", "TaskGroup", "timeout", "timeout_at", "Timeout"},
    "typing": {"Self", "LiteralString", "Never", "assert_type", "reveal_type", "TypeVarTuple"},
    "datetime": {"UTC"},
    "enum": {"StrEnum", "verify", "member", "nonmember"},
}
#: builtins Python 3.10 lacks, or that mean something else there
BUILTINS = {"ExceptionGroup", "BaseExceptionGroup", "TimeoutError"}
MODULES = {"tomllib", "wsgiref.types"}


def found_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr in NEW_IN_311.get(node.value.id, set()):
                hits.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in NEW_IN_311:
            hits += [
                f"{where}:{node.lineno}: from {node.module} import {alias.name}"
                for alias in node.names
                if alias.name in NEW_IN_311[node.module]
            ]
        elif isinstance(node, ast.Name) and node.id in BUILTINS:
            hits.append(f"{where}:{node.lineno}: {node.id}")
        elif isinstance(node, getattr(ast, "TryStar", ())):  # ast has it from 3.11
            hits.append(f"{where}:{node.lineno}: except*")
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            hits += [f"{where}:{node.lineno}: import {n}" for n in names if n in MODULES]
    return hits


def test_pyproject_still_says_3_10() -> None:
    """(Read without tomllib, which 3.10 lacks: this suite runs there too.)"""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.findall(r'^requires-python = "(.*)"$', text, re.M) == [">=3.10"]


def test_the_package_names_nothing_only_python_3_11_has() -> None:
    hits = [hit for path in sorted(SRC.rglob("*.py")) for hit in found_in(path)]
    assert hits == []


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    code = (
        "import asyncio, contextlib, tomllib\n"
        "from typing import Self\n"
        "asyncio.Runner\n"
        "with contextlib.suppress(TimeoutError):\n    pass\n"
    )
    path = tmp_path / "sample.py"
    path.write_text(code)
    hits = found_in(path)
    assert [hit.split(": ", 1)[1] for hit in hits] == [
        "import tomllib",
        "from typing import Self",
        "asyncio.Runner",
        "TimeoutError",
    ]
