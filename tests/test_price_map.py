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
import importlib, importlib.abc, importlib.util, json, os, pkgutil, socket, sys

found = {"unset_at_import": [], "connects": [], "first": None}

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
if modules == ["ALL"]:  # every module whose source names litellm, in the package's order
    import titjudge
    walked = pkgutil.walk_packages(titjudge.__path__, "titjudge.")
    modules = sorted(
        m.name for m in walked
        if not m.name.endswith("__main__")
        and "litellm" in open(importlib.util.find_spec(m.name).origin).read()
    )
for module in modules:
    importer.append(module)
    try:
        importlib.import_module(module)
    except ImportError as exc:  # an optional extra (ray, torch) not installed here
        pass
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


@pytest.mark.slow  # a fresh interpreter: litellm's import is the subject
def test_importing_the_package_then_litellm_never_fetches_prices() -> None:
    found = child("titjudge")
    assert found["unset_at_import"] == [] and found["connects"] == []


@pytest.mark.slow  # a fresh interpreter importing each module that names litellm
def test_every_module_imports_without_litellm_fetching_prices() -> None:
    """Each module whose source names litellm (the walk below finds every import of it there),
    imported one after the other: litellm comes in with the variable set, nothing connects.
    Modules that never name litellm cannot import it but through one that does."""
    found = child("ALL")
    assert found["first"] is not None  # some module imports litellm: the check saw it
    assert found["unset_at_import"] == [] and found["connects"] == []


@pytest.mark.slow
def test_every_import_litellm_site_is_inside_the_package() -> None:
    """Every `import litellm` sits in a titjudge module, so the package's __init__ (which sets
    the variable) has run before it; none sets the variable itself after importing."""
    sites = []
    for path in SRC.rglob("*.py"):
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
                sites.append(path.relative_to(SRC).as_posix())
    assert sites  # the walk found litellm's importers
    init = (SRC / "__init__.py").read_text()
    assert 'os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")' in init
    assert "import litellm" not in init
