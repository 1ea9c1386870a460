"""The workbench's own files (its page, script, style and icon), read from the package: what
the server sends and the bundle copies. No web library here, so writing a bundle (`view
--bundle`, `audit --html`) needs none."""

from __future__ import annotations

from importlib import resources

#: the files under /assets/, with their content types
ASSETS = {
    "app.js": "application/javascript",
    "app.css": "text/css",
    "icon.svg": "image/svg+xml",
}


def asset(name: str) -> bytes:
    """One of the app's files; the icon is the annotation app's (one mark for both)."""
    package = "titjudge.annotate" if name == "icon.svg" else "titjudge.workbench"
    return resources.files(package).joinpath("assets", name).read_bytes()


__all__ = ["ASSETS", "asset"]
