"""`titjudge` command lines in child processes that start warm.

A test that must kill a run (kill -9, Ctrl-C), run two at once on one cache or watch a run
from outside needs a process of its own; one that starts `python -m titjudge` pays about 5 s
of CPU to import litellm, LangGraph and titjudge before it does anything. `start_cli` forks
each child from a server process that imported them once per test session (the standard
library's forkserver, with a preload), so the child is a real process of its own (its pid,
signals, memory, file descriptors and exit code, -9 when killed) that starts in
milliseconds, and runs `titjudge.cli.main()` on its own `sys.argv`, environment and working
directory, its stdout and stderr going to files the test reads. `before`, a module-level
function (it is pickled by name), runs in the child first: a resource limit, a patch.

What a warm child cannot show, so those tests start `python -m titjudge` themselves: what a
fresh interpreter imports (`sys.modules`), a hash seed (PYTHONHASHSEED is fixed when an
interpreter starts), what the interpreter does at exit (a warm child leaves through
os._exit) and environment variables a module reads when it is imported (the preloaded ones
saw the test session's environment).
"""

from __future__ import annotations

import io
import itertools
import multiprocessing
import os
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

#: what every child would import first; litellm's import is most of the cost. The second
#: group is what a run through the loopback server imported beyond the first (~0.4 s a child)
PRELOAD = (
    "titjudge.cli",
    "titjudge.config",
    "titjudge.run.runner",
    "titjudge.models.litellm.backend",
    "titjudge.models.litellm.batch.api",
    "langgraph.graph",
    "rich.console",
    "rich.table",
    "litellm.proxy._types",
    "litellm.integrations.prometheus_services",
    "diskcache",
    "numpy.ma",
    "titjudge.agents.graph",
    "titjudge.run.preflight",
    "titjudge.report.analysis.breakdown",
    "titjudge.report.analysis.run",
)
_numbers = itertools.count()
_context: Any = None
#: CPU seconds of the children that ended through main() (a killed one cannot tell), for
#: tests/cpu_report.py, which charges each test its share
children_cpu = 0.0


def _forkserver() -> Any:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(list(PRELOAD))
    return _context


def stop_forkserver() -> None:
    """Stop the forkserver and reap it, so its children's CPU counts in this process's
    rusage (the suite's CPU report reads it)."""
    server = getattr(forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)
    if _context is not None and stop is not None and server._forkserver_pid is not None:
        stop()


def _child(
    args: list[str],
    env: dict[str, str],
    cwd: str,
    out: str,
    err: str,
    before: Callable[[], object] | None,
) -> None:
    """In the forked child: the environment, folder and streams of `python -m titjudge ARGS`."""
    for fd, path in ((1, out), (2, err)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    # the streams live as long as the child: no context manager can hold them
    out_stream = os.fdopen(1, "wb", closefd=False)
    err_stream = os.fdopen(2, "wb", closefd=False)
    sys.stdout = io.TextIOWrapper(out_stream, encoding="utf-8", line_buffering=True)
    sys.stderr = io.TextIOWrapper(err_stream, encoding="utf-8", line_buffering=True)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["titjudge", *args]
    if before is not None:
        before()
    from titjudge.cli import main

    try:
        code = main()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        used = resource.getrusage(resource.RUSAGE_SELF)  # for the suite's CPU report
        Path(out).with_name("cpu").write_text(f"{used.ru_utime + used.ru_stime:.3f}")
    sys.exit(code)


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


class CliProcess:
    """One `titjudge ARGS` child: a small part of `subprocess.Popen`'s interface."""

    def __init__(
        self,
        args: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        before: Callable[[], object] | None = None,
    ) -> None:
        logs = Path(tempfile.mkdtemp(prefix=f"titjudge-cli-{next(_numbers)}-"))
        self._out, self._err = logs / "stdout", logs / "stderr"
        self._out.touch()
        self._err.touch()
        self.args = list(args)
        self._process = _forkserver().Process(
            target=_child,
            args=(
                self.args,
                dict(os.environ if env is None else env),
                str(cwd or os.getcwd()),
                str(self._out),
                str(self._err),
                before,
            ),
            daemon=True,  # a test that fails before it ends its child does not hang pytest's exit
        )
        self._process.start()

    @property
    def pid(self) -> int:
        return int(self._process.pid)

    @property
    def returncode(self) -> int | None:
        """The exit code; minus the signal's number for a child a signal ended, as Popen's."""
        return self._process.exitcode  # type: ignore[no-any-return]

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        global children_cpu
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(["titjudge", *self.args], timeout or 0)
        cpu = self._out.with_name("cpu")
        if cpu.is_file():
            children_cpu += float(cpu.read_text())
            cpu.unlink()
        return int(self._process.exitcode)

    def send_signal(self, sig: int) -> None:
        if self._process.exitcode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def stdout(self) -> str:
        """What the child wrote to stdout so far."""
        return self._out.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        """What the child wrote to stderr so far."""
        return self._err.read_text(encoding="utf-8", errors="replace")

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Wait for the child to end; its whole stdout and stderr."""
        self.wait(timeout)
        return self.stdout(), self.stderr()


def start_cli(
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    before: Callable[[], object] | None = None,
) -> CliProcess:
    """Start `titjudge ARGS` in a warm child process (the module's docstring says what that is)."""
    return CliProcess(args, env=env, cwd=cwd, before=before)


def run_cli(
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 300,
    before: Callable[[], object] | None = None,
) -> Finished:
    """`titjudge ARGS` in a warm child process, to its end."""
    child = start_cli(args, env=env, cwd=cwd, before=before)
    try:
        out, err = child.communicate(timeout)
    finally:
        child.kill()
    return Finished(child.wait(), out, err)
