"""Every package's submodules reachable as attributes after `import titjudge`, imported on
first use: `titjudge.report.analysis.breakdown.length_breakdown(...)`, as the docs write it,
works in a fresh interpreter without importing `titjudge.report.analysis.breakdown` first,
and `import titjudge` still imports none of them (it stays cheap: `titjudge --help` and
the heavy-import tests hold that).

Each package's `__init__.py` sets `__getattr__ = lazy_submodules(__name__)` (PEP 562: it is
asked only for a name the package does not have). Imports nothing but the standard library.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from types import ModuleType


def lazy_submodules(package: str) -> Callable[[str], ModuleType]:
    """The module `__getattr__` of `package`: a submodule's name imports it and returns it;
    any other name is the AttributeError Python would raise."""

    def __getattr__(name: str) -> ModuleType:
        if not name.startswith("_"):
            full = f"{package}.{name}"
            try:
                found = importlib.util.find_spec(full)
            except (ImportError, ValueError):
                found = None
            if found is not None:
                return importlib.import_module(full)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


__all__ = ["lazy_submodules"]
