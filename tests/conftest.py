"""Shared by every test package: the suite's CPU report (tests/cpu_report.py) and the warm
`titjudge` child processes (tests/cli_process.py), whose forkserver is stopped at the end."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

# Bytecode is kept (in git-ignored __pycache__ folders), as Python does by default: where the
# environment turns it off (PYTHONDONTWRITEBYTECODE), every test process and every titjudge
# child process would compile titjudge and the test modules again (~8 s of CPU a process)
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Ctrl-C reaches the runs the tests interrupt even where the suite itself was started with
# SIGINT ignored (a shell's background job: `pytest &`), which every child would inherit
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["cpu_report"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    import cli_process

    cli_process.stop_forkserver()


ARTIFACTS = Path(__file__).resolve().parents[1] / "ci-artifacts"
_STARTED = time.time()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the screenshots the browser tests left in this session, so the CI log points at
    them (here, not in a package's conftest: under xdist only this one reaches the controller)."""
    for shot in sorted(ARTIFACTS.glob("*.png")):
        if shot.stat().st_mtime >= _STARTED:
            terminalreporter.write_line(f"CI artifact: {shot} (screenshot from a browser test)")
