"""The suite's CPU seconds: pytest's own and its children's (servers, `titjudge` runs).

A pytest plugin, loaded from tests/conftest.py. Each test's CPU is the change in
`getrusage(SELF) + getrusage(CHILDREN)` across its setup, call and teardown, so a test that
starts a subprocess is charged for it once the subprocess is reaped. Under pytest-xdist every
worker sends its totals to the controller, which prints one line for the whole suite:

    suite CPU: 123.4 s (user 110.2 s + system 13.2 s) over 3 processes, wall 150.2 s

`--cpu-json FILE` also writes every test's CPU and wall seconds, for finding what to speed up.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import pytest


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + kids.ru_utime, own.ru_stime + kids.ru_stime


def _warm_children() -> float:
    """CPU of the warm `titjudge` children (tests/cli_process.py) that ended so far: their
    forkserver reaps them, so RUSAGE_CHILDREN sees them only when it stops, at the end."""
    module = sys.modules.get("cli_process")
    return float(getattr(module, "children_cpu", 0.0))


class CpuReport:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = time.monotonic()
        self.per_test: dict[str, dict[str, float]] = {}
        self.workers: list[tuple[float, float]] = []
        self._at: dict[str, tuple[float, float, float]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> Any:
        user, system = _cpu()
        warm = _warm_children()
        wall = time.monotonic()
        yield
        user2, system2 = _cpu()
        self.per_test[item.nodeid] = {
            "cpu": round(user2 - user + system2 - system + _warm_children() - warm, 3),
            "wall": round(time.monotonic() - wall, 3),
        }

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: hand the totals to the controller
            workeroutput["cpu_report"] = json.dumps({"cpu": _cpu(), "tests": self.per_test})

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        raw = getattr(node, "workeroutput", {}).get("cpu_report")
        if raw:
            got = json.loads(raw)
            self.workers.append(tuple(got["cpu"]))  # type: ignore[arg-type]
            self.per_test.update(got["tests"])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if getattr(self.config, "workeroutput", None) is not None:
            return
        if self.workers:  # the controller runs no test: its own CPU plus each worker's
            own = resource.getrusage(resource.RUSAGE_SELF)
            user = own.ru_utime + sum(w[0] for w in self.workers)
            system = own.ru_stime + sum(w[1] for w in self.workers)
        else:
            user, system = _cpu()
        wall = time.monotonic() - self.started
        terminalreporter.write_line(
            f"suite CPU: {user + system:.1f} s (user {user:.1f} s + system {system:.1f} s)"
            f" over {1 + len(self.workers)} process(es) and their children, wall {wall:.1f} s"
        )
        out = self.config.getoption("cpu_json")
        if out:
            Path(out).write_text(json.dumps(self.per_test, indent=1, sort_keys=True))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-json",
        dest="cpu_json",
        default=None,
        help="write every test's CPU and wall seconds to this JSON file",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(CpuReport(config), "titjudge_cpu_report")
