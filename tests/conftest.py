"""Shared by every test package: the suite's CPU report (tests/cpu_report.py) and the warm
`titjudge` child processes (tests/cli_process.py), whose forkserver is stopped at the end."""

from __future__ import annotations

import pytest

pytest_plugins = ["cpu_report"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    import cli_process

    cli_process.stop_forkserver()
