"""What the browser tests share: Debian's Chromium, driven through Playwright, and the mark
that skips them, saying why, where it is not installed (.ci/run installs it)."""

from __future__ import annotations

from pathlib import Path

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
