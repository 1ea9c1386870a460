"""Reading a file a user named (titjudge.user_files, issue 48): a regular file only, refused
before it is opened otherwise (a FIFO blocks an open for reading until a writer comes), and
within a time bound that leaves a stuck read behind without holding the caller or the
process's exit."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from titjudge.errors import DataError
from titjudge.user_files import (
    read_user_file,
    stat_user_file,
    user_file_problems,
    with_user_file,
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "blocks.png"
    os.mkfifo(path)
    return path


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(b"\x89PNG" + bytes(range(256)) * 5000)
    assert read_user_file(path) == path.read_bytes()
    assert stat_user_file(path).st_size == path.stat().st_size


@needs_fifo
def test_a_fifo_is_refused_without_being_opened(fifo: Path) -> None:
    # no writer ever comes: an open for reading would block for good
    with pytest.raises(DataError) as raised:
        read_user_file(fifo, timeout=30)
    assert str(raised.value) == f"{fifo}: image is a FIFO (named pipe), not a regular file"


def test_a_folder_a_device_and_a_missing_path_each_say_what_they_are(tmp_path: Path) -> None:
    found = user_file_problems([tmp_path, Path(os.devnull), tmp_path / "gone.png", Path(__file__)])
    assert found == [
        "image is a folder, not a regular file",
        "image is a device, not a regular file",
        "image file not found",
        None,
    ]
    with pytest.raises(DataError, match="descriptions file not found"):
        read_user_file(tmp_path / "gone.jsonl", "descriptions")


def test_a_read_that_does_not_finish_in_time_is_a_data_error_and_the_caller_goes_on(
    tmp_path: Path,
) -> None:
    """A hung network mount, as a read that never returns: the caller gets one line."""
    path = tmp_path / "on-a-hung-mount.png"
    path.write_bytes(b"\x89PNG")
    release = threading.Event()
    with pytest.raises(DataError) as raised:
        with_user_file(path, lambda handle: release.wait(), timeout=0.2)
    release.set()
    assert str(raised.value) == (
        f"{path}: reading the image took over 0.2 s (a hung network mount?); nothing was read"
    )
    assert read_user_file(path) == b"\x89PNG"  # the next read gets a worker of its own


_STUCK = """
import sys, threading
from titjudge.errors import DataError
from titjudge.user_files import with_user_file
try:
    with_user_file(sys.argv[1], lambda handle: threading.Event().wait(), timeout=0.2)
except DataError as error:
    print(error)
"""


@pytest.mark.slow  # a child interpreter
def test_a_read_stuck_for_good_does_not_hold_the_process_at_exit(tmp_path: Path) -> None:
    """The stuck read's thread is a daemon: the interpreter exits past it (a thread of
    asyncio's or concurrent.futures' pools would be joined at exit, and the process hang)."""
    path = tmp_path / "stuck.png"
    path.write_bytes(b"\x89PNG")
    done = subprocess.run(
        [sys.executable, "-c", _STUCK, str(path)],
        capture_output=True,
        text=True,
        timeout=120,  # not a speed bound: the old way never exits at all
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "took over 0.2 s" in done.stdout
