"""No code in src/ that only tests reach: every top-level function and class of the package
is referenced somewhere in src/ (a call, a name, an attribute, or a "module:name" string such
as an entry point), not counting its own `def`, imports of it, or `__all__`.

Tests then test the code a run, a command or the library's user goes through, never a
wrapper kept alive for them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "titjudge"
#: a function registered by a decorator is reached through the registry that calls it
REGISTERING = {"judge_kind"}
#: reached from outside src/ on purpose, or not yet removed; each with its reason
ALLOWED = {
    # public API, for the library's user: the package docstring and docs/ show them
    "evaluate_async": "__init__.py",  # `await titjudge.evaluate_async(...)` in a notebook
    "find_run": "__init__.py",  # docs/runs-and-analysis.md, docs/commands.md
    "load_runs": "__init__.py",  # docs/runs-and-analysis.md
    # issue 49, the judges/ and models/ helper's scope: reached only by tests so far
    "lexical_similarity": "judges/lexical.py",
    "gemini_violations": "models/litellm/schemas.py",
    "openai_strict_violations": "models/litellm/schemas.py",
    # issue 49, not yet removed: the one-row form of `_ndcg_rows` its hand cases test, and
    # the loader's budget for one path (data/images.py; the loader calls header_pixels)
    "ndcg_score": "metrics/ndcg.py",
    "decode_pixels": "data/images.py",
}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _exported(tree: ast.Module) -> set[int]:
    """The nodes of `__all__ = [...]`: naming a function there is no use of it."""
    found: set[int] = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target]
            if isinstance(node, ast.AnnAssign) else []
        )  # fmt: skip
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            found |= {id(n) for n in ast.walk(node)}
    return found


def _registered(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id in REGISTERING
        for d in decorators
    )


def unreferenced(root: Path) -> dict[str, str]:
    """Top-level functions and classes under `root` that nothing under `root` refers to."""
    defined: dict[str, str] = {}
    used: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and not node.name.startswith("__")
                and not _registered(node)
            ):
                defined.setdefault(node.name, str(path.relative_to(root)))
        skip = _exported(tree) | {  # a docstring or comment string naming it is no use of it
            id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)
        }
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                used.update(_WORD.findall(node.value))  # "titjudge.cli:main", getattr names
    return {name: where for name, where in defined.items() if name not in used}


def test_every_function_and_class_is_reached_from_src() -> None:
    found = {n: w for n, w in unreferenced(SRC).items() if ALLOWED.get(n) != w}
    assert not found, f"reached only from outside src/ (remove, or allow with a reason): {found}"


def test_the_allow_list_holds_only_what_is_still_unreferenced() -> None:
    assert set(ALLOWED) <= set(unreferenced(SRC)), "allowed but now reached: drop it from ALLOWED"


def test_the_walk_finds_a_function_only_a_test_calls(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "__all__ = ['helper', 'used']\n"
        "def helper(): pass\n"
        "def used(): pass\n"
        "@judge_kind('x')\n"
        "def build_x(): pass\n"
        "ENTRY = 'pkg.a:entry'\n"
        "def entry(): pass\n"
        "class Kept: pass\n"
        "def told(): pass\n"
        "'''told() is named here only'''\n"
    )
    (tmp_path / "b.py").write_text("from a import used, helper\nused()\nx: 'Kept'\n")
    assert unreferenced(tmp_path) == {"helper": "a.py", "told": "a.py"}
