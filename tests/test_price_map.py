"""litellm never fetches its price map (issue 30): LITELLM_LOCAL_MODEL_COST_MAP is set before
any import of litellm, whichever titjudge module comes first, and for code that imports litellm
after titjudge. A fresh process with the variable unset and the network blocked imports every
titjudge module, then litellm itself, and reports whether litellm was imported without the
variable or anything tried to connect."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "titjudge"

CHILD = r"""
import importlib, importlib.abc, json, os, socket, sys

found = {"unset_at_import": [], "connects": [], "first": None, "set_by_package": None}

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "litellm" and found["first"] is None:
            found["first"] = importer[-1] if importer else "(none)"
            if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "").lower() != "true":
                found["unset_at_import"].append(found["first"])
        return None

def refuse(self, address, *args):
    found["connects"].append(str(address))
    raise OSError("network blocked by the test")

socket.socket.connect = refuse
sys.meta_path.insert(0, Watch())
importer = []
modules = sys.argv[1:]
for module in modules:
    importer.append(module)
    try:
        importlib.import_module(module)
    except ImportError as exc:  # an optional extra (ray, torch) not installed here
        pass
    if module == "titjudge":  # the bare package: what a user's later `import litellm` sees
        found["set_by_package"] = os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")
importer.append("litellm (after titjudge)")
import litellm
print(json.dumps(found))
"""


def child(*modules: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *modules],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.slow  # a fresh interpreter importing each module that imports litellm
def test_the_package_and_every_module_import_without_litellm_fetching_prices() -> None:
    """One fresh interpreter imports the bare package (after which a user's own `import
    litellm` must find the variable set), then each module holding an `import litellm` (found
    as the test below finds them), one after the other, then litellm itself: litellm comes in
    with the variable set, nothing connects. Any other module can import litellm only through
    one of these. (Two tests, one interpreter each, before: merged to pay litellm's import
    once.)"""
    modules = sorted({site_module(path) for path in litellm_import_sites()})
    found = child("titjudge", *modules)
    assert found["set_by_package"] == "True"  # `import titjudge` alone set it
    assert found["first"] is not None and found["first"] != "titjudge"  # a module imported it
    assert found["unset_at_import"] == [] and found["connects"] == []


def litellm_import_sites() -> list[Path]:
    """The package's files holding an `import litellm` or `from litellm... import`."""
    sites = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        if "litellm" not in text:  # no import of litellm can hide in a file without the word
            continue
        for node in ast.walk(ast.parse(text)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "litellm" or n.startswith("litellm.") for n in names):
                sites.append(path)
                break
    return sites


def site_module(path: Path) -> str:
    parts = ("titjudge", *path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.slow
def test_every_import_litellm_site_is_inside_the_package() -> None:
    """Every `import litellm` sits in a titjudge module, so the package's __init__ (which sets
    the variable) has run before it; none sets the variable itself after importing."""
    sites = [path.relative_to(SRC).as_posix() for path in litellm_import_sites()]
    assert sites  # the walk found litellm's importers
    init = (SRC / "__init__.py").read_text()
    assert 'os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")' in init
    assert "import litellm" not in init
