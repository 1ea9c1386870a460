"""A full disk for one run file: its temp file is /dev/full, so writing it fails with a real
ENOSPC from the kernel while every other file (and the cache) writes normally.

In-process: `install(name, monkeypatch)`; in a child process: put tests/faults on PYTHONPATH and
`import full_disk; full_disk.install(name)` before running the command."""

from __future__ import annotations

import os
import resource
import signal
from pathlib import Path
from typing import Any

import titjudge.files as files


def install(name: str, monkeypatch: Any = None) -> None:
    """Every atomic write of a file called `name` runs into a full disk."""
    original = files._create_temp

    def create_temp(path: Path) -> tuple[int, Path]:
        if path.name != name:
            return original(path)
        return os.open("/dev/full", os.O_WRONLY), path.with_name(f".{name}.never-created")

    if monkeypatch is not None:
        monkeypatch.setattr(files, "_create_temp", create_temp)
    else:
        files._create_temp = create_temp


def limit_file_size(limit: int) -> None:
    """In a child process: a write past `limit` bytes in any file fails with EFBIG (SIGXFSZ
    ignored), as SQLite sees a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
