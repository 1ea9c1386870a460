"""For test_execution.py: `before` for a warm `titjudge` child (tests/cli_process.py) that
runs as if Ray were not installed. The child's forkserver never imports Ray (it preloads the
CLI, litellm and LangGraph), so hiding it here is what `sys.modules["ray"] = None` at the top
of a fresh interpreter was."""

from __future__ import annotations

import sys


def hide_ray() -> None:
    assert not any(m == "ray" or m.startswith(("ray.", "titjudge.models.ray")) for m in sys.modules)
    sys.modules["ray"] = None  # type: ignore[assignment]
