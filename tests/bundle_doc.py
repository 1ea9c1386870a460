"""Reading a workbench bundle back in tests: `titjudge audit RUN --html DIR` and `titjudge view
RUNS --bundle DIR` write DIR/bundle.js, one assignment of the documents the page shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PREFIX = "window.TITJUDGE_BUNDLE = "


def read_bundle(folder: Path) -> dict[str, Any]:
    """The documents of the bundle at `folder` (its bundle.js, as the page reads it)."""
    text = (folder / "bundle.js").read_text(encoding="utf-8")
    assert text.startswith(PREFIX) and text.endswith(";\n"), text[:80]
    return json.loads(text[len(PREFIX) : -2])


def audit_bundle(run: Path, out: Path) -> dict[str, Any]:
    """`titjudge audit RUN --html OUT` (exit 0), read back."""
    from titjudge.cli import main

    assert main(["audit", str(run), "--html", str(out)]) == 0
    assert (out / "index.html").is_file()
    return read_bundle(out)
