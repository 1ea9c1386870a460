"""What the browser tests share: Debian's Chromium, driven through Playwright, and the mark
that skips them, saying why, where it is not installed (.ci/run installs it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: where the browser tests leave their screenshots (named by tests/conftest.py for CI's log)
ARTIFACTS = Path(__file__).resolve().parents[1] / "ci-artifacts"

#: every browser test module's marks: slow (a real browser), skipped without Chromium
BROWSER_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.is_file(),
        reason="needs Debian's chromium at /usr/bin/chromium "
        "(apt-get install chromium; .ci/run installs it)",
    ),
]

#: Chromium's switches for every browser test: headless, no sandbox (CI runs as root), and
#: nothing that reaches past loopback (updates, sync, background requests)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--allow-file-access-from-files",  # a bundle's index.html reads its bundle.js
]


@contextmanager
def chromium_context(profile: Path, width: int = 1280, height: int = 1000) -> Iterator[Any]:
    """One headless Chromium with a fresh profile at `profile` (a persistent context, so
    file:// pages work as a user's browser opens them)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=ARGS,
            headless=True,
            viewport={"width": width, "height": height},
        )
        try:
            yield context
        finally:
            context.close()
