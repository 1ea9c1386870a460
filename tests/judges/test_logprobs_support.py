"""The config-time check whether a litellm model reports token log-probabilities reads
litellm's local provider table: the import goes through titjudge's litellm backend module,
which sets LITELLM_LOCAL_MODEL_COST_MAP first (a bare import fetches prices online and, with
no network, waits on retries).

In this process, with litellm and the backend module taken out of `sys.modules` and the
variable unset: the check imports the backend module again, whose `import litellm` a finder
on `sys.meta_path` watches (it records the variable at that moment and hands back the
litellm this process imported, so litellm is not imported twice). That litellm reads the
same local table a fresh interpreter's would (the package sets the variable before any
import of litellm: tests/test_price_map.py imports every module in a fresh interpreter with
the network blocked)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from titjudge.judges.building import provider_supports_logprobs

# the backend module is imported again
pytestmark = pytest.mark.slow


class _WatchLitellm(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `litellm` (a top-level import), noting the variable as the import begins; its
    module is the one already imported."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.cost_map_env: list[str | None] = []

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "litellm":
            return None
        self.cost_map_env.append(os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"))
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec: Any) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        pass


def client(backend: str, model_id: str) -> Any:
    return SimpleNamespace(
        backend=SimpleNamespace(spec=SimpleNamespace(backend=backend, model_id=model_id))
    )


def test_the_logprobs_check_imports_litellm_with_the_local_price_map(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import litellm

    import titjudge.models.litellm as package
    import titjudge.models.litellm.backend as backend

    watch = _WatchLitellm(litellm)
    # the import machinery writes these on the module it finds and on the parent package
    for attribute in ("__spec__", "__loader__", "__path__", "__file__"):
        monkeypatch.setattr(litellm, attribute, getattr(litellm, attribute))
    monkeypatch.setattr(package, "backend", backend)
    monkeypatch.delitem(sys.modules, "litellm")
    monkeypatch.delitem(sys.modules, "titjudge.models.litellm.backend")
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    monkeypatch.setattr(sys, "meta_path", [watch, *sys.meta_path])

    found = {
        "openai": provider_supports_logprobs(client("litellm", "openai/gpt-4o")),
        "local": provider_supports_logprobs(client("hf", "/some/checkpoint")),
        "cost_map_env": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
    }
    assert found == {"openai": True, "local": None, "cost_map_env": "True"}
    # the check imported litellm once, through the backend module, with the variable set
    assert watch.cost_map_env == ["True"]
    assert sys.modules["titjudge.models.litellm.backend"] is not backend
    assert sys.modules["litellm"] is litellm
