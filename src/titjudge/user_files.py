"""Reading a file a user named (a manifest's image, an image beside a descriptions file): only
a regular file, and within a time bound, so a path that cannot be read is one DataError (the
item's failure record) and a run always ends (issue 48: a FIFO in a manifest hung a run).

- A FIFO, a device, a socket or a folder is refused before it is opened: `os.stat` says what
  the path is; a regular file is then opened with O_NONBLOCK and checked again (`fstat`)
  before a byte is read, so a path swapped for a FIFO in between cannot block the open.
- The stat, the open and the read run in a daemon thread, waited for at most `READ_TIMEOUT`
  seconds. A hung network mount blocks that thread, not the caller, who gets a DataError; a
  blocked read cannot be cancelled, so the thread is left to the OS, and since it is a daemon
  it does not hold the process at exit (asyncio's and concurrent.futures' worker threads are
  joined at exit, so a read stuck in one of them would).
"""

from __future__ import annotations

import os
import queue
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO, TypeVar, cast

from titjudge.errors import DataError

T = TypeVar("T")

#: seconds one file's stat, open and read may take (a preflight's lookup of all its files)
READ_TIMEOUT = 60.0


def non_regular_kind(mode: int) -> str | None:
    """What a path that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


class _Job:
    """One piece of work handed to a daemon worker, and its outcome."""

    def __init__(self, work: Callable[[], object]):
        self.work = work
        self.done = threading.Event()
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:  # handed to the caller, who raises it
            self.error = exc
        finally:
            self.done.set()


class _DaemonWorkers:
    """Daemon threads that run jobs; one idle is reused (a thread per read costs ~0.1 ms),
    one stuck in a read is left behind and another started for the next job."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, job: _Job) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._work, name="titjudge-file-read", daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            self._jobs.get().run()
            with self._lock:
                self._idle += 1


_WORKERS = _DaemonWorkers()


def _forked() -> None:
    """A forked child has none of its parent's threads: it starts its own workers."""
    global _WORKERS
    _WORKERS = _DaemonWorkers()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def bounded(work: Callable[[], T], what: str, timeout: float | None = None) -> T:
    """`work()` in a daemon thread; its result or its exception, or a DataError when it has
    not finished within `timeout` seconds (default `READ_TIMEOUT`) ("<what> took over ...")."""
    limit = READ_TIMEOUT if timeout is None else timeout
    job = _Job(work)
    _WORKERS.submit(job)
    if not job.done.wait(limit):
        raise DataError(f"{what} took over {limit:g} s (a hung network mount?); nothing was read")
    if job.error is not None:
        raise job.error
    return cast(T, job.result)


def _problem(path: Path, what: str) -> str | None:
    """Why `path` is not a readable regular file, or None (blocking: call it bounded)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"{what} file not found"
    except (OSError, ValueError) as exc:
        return f"cannot read {what} ({getattr(exc, 'strerror', None) or exc})"
    kind = non_regular_kind(mode)
    return None if kind is None else f"{what} is {kind}, not a regular file"


def _opened(path: Path, what: str, use: Callable[[BinaryIO], T]) -> T:
    """`use(handle)` on the regular file at `path`, opened without blocking (see the module;
    blocking in its reads: call it bounded)."""
    problem = _problem(path, what)
    if problem is not None:
        raise DataError(f"{path}: {problem}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise DataError(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        kind = non_regular_kind(os.fstat(fd).st_mode)
        if kind is not None:  # swapped since the stat
            raise DataError(f"{path}: {what} is {kind}, not a regular file")
        return use(handle)


def with_user_file(
    path: str | Path,
    use: Callable[[BinaryIO], T],
    what: str = "image",
    timeout: float | None = None,
) -> T:
    """`use(handle)` on the regular file at `path`, opened and used within `timeout` seconds
    (default `READ_TIMEOUT`); a DataError naming it when it is missing, not a regular file,
    unreadable or not done in time."""
    path = Path(path)
    return bounded(lambda: _opened(path, what, use), f"{path}: reading the {what}", timeout)


def read_user_file(path: str | Path, what: str = "image", timeout: float | None = None) -> bytes:
    """The bytes of the regular file at `path` (`with_user_file`'s refusals and bound)."""
    path = Path(path)

    def read(handle: BinaryIO) -> bytes:
        try:
            return handle.read()
        except OSError as exc:  # an I/O error of the disk or the mount
            raise DataError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None

    return with_user_file(path, read, what, timeout)


def stat_user_file(path: str | Path, timeout: float | None = None) -> os.stat_result:
    """`os.stat(path)` within `timeout` seconds; OSError as os.stat raises it, DataError when
    it does not answer in time."""
    return bounded(lambda: os.stat(path), f"{path}: looking the file up", timeout)


def user_file_problems(
    paths: Iterable[Path], what: str = "image", timeout: float | None = None
) -> list[str | None]:
    """Per path, why it is not a readable regular file (`<what> file not found`, `<what> is a
    FIFO (named pipe), not a regular file`, ...) or None; all of them looked up within
    `timeout` seconds together (a DataError when not)."""
    found = list(paths)
    return bounded(
        lambda: [_problem(path, what) for path in found],
        f"looking up {len(found)} {what} files",
        timeout,
    )


__all__ = [
    "READ_TIMEOUT",
    "bounded",
    "non_regular_kind",
    "read_user_file",
    "stat_user_file",
    "user_file_problems",
    "with_user_file",
]
