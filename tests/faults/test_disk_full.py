"""A full disk under the cache ends the run with one line and exit 2; every answer stored
before it stays, and a re-run after freeing space resumes from them.

The disk fills for real: the run is a child process (warm: tests/cli_process.py) whose
file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes writes past it fail with EFBIG, as SQLite
sees on a full disk; where this machine lets a test mount a small tmpfs, the same run (in this
process: the full tmpfs holds nothing but its cache) also meets a real ENOSPC. The child prints a progress record every 10 ms: however many came first,
the stop is one line and the last one on stderr.
"""

import functools
import json
import os
import shutil
import subprocess
import uuid

import full_disk
import pytest
from cli_process import Finished, run_cli
from doubles.server import FakeOpenAIServer, build_responder
from fault_helpers import config, descriptions
from run_dirs import latest_run

from titjudge.cache.store import CallCache
from titjudge.cli import main

ITEMS = 24  # fault_data: 6 prompts x 4 models
CALLS = 2 * ITEMS  # one describer and one judge call per item


@pytest.fixture
def server(fault_data):
    with FakeOpenAIServer(
        responder=build_responder("auto", descriptions=descriptions(fault_data))
    ) as srv:
        yield srv


def _answers(cache_dir):
    cache = CallCache(cache_dir, create=False)
    try:
        return cache.entries()
    finally:
        cache.close()


def _run_child(path, file_limit=None):
    limit = functools.partial(full_disk.limit_file_size, file_limit) if file_limit else None
    return run_cli(["run", str(path), "--progress-every", "0.01"], before=limit)


def _resume_and_check(path, server, cache_dir, stored, capsys):
    """Re-run with room to write: the stored answers are hits, only the rest is asked."""
    before = len(server.stats.records)
    code = main(["run", str(path)])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((latest_run(path.parent / "runs" / "faults") / "summary.json").read_text())
    assert summary["cache"]["hits"] == stored
    assert summary["cache"]["misses"] == CALLS - stored
    # The server's word: the bodies asked after the stop are exactly the ones not stored. Counted
    # as distinct bodies, since a request the stopped run had sent may reach the server only now
    # (under load its parse lags); that body is one of the unstored ones, asked again anyway.
    asked = {r.body_hash for r in server.stats.records[before:] if r.status == 200}
    assert len(asked) == CALLS - stored
    assert _answers(cache_dir) == CALLS


def _assert_one_line_stop(done, cache_dir):
    """The stop is one line, the last on stderr; every line before it is a progress record."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    *before, last = done.stderr.strip().splitlines()
    assert all(line.startswith("progress: ") for line in before), done.stderr
    assert last.startswith("titjudge: error: "), done.stderr
    assert f"cannot store answers in the cache at {cache_dir}" in last
    assert "stored in this run" in last and "resumes from them" in last
    return last


@pytest.mark.slow
def test_a_file_size_limit_stops_the_run_and_keeps_what_was_stored(
    fault_data, server, tmp_path, capsys
):
    cfg = config(fault_data, server.url, tmp_path)
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(cfg))
    cache_dir = tmp_path / "cache"
    # room for the cache's tables and some answers, not for 48 answers and their claims
    done = _run_child(path, file_limit=800_000)
    stop = _assert_one_line_stop(done, cache_dir)
    stored = _answers(cache_dir)
    said = int(stop.split(" answer")[-2].rsplit(" ", 1)[-1])
    assert 0 < stored < CALLS and said == stored  # the line counts exactly what survived
    assert list((tmp_path / "runs" / "faults").iterdir()) == []  # no half a run, no staging dir
    _resume_and_check(path, server, cache_dir, stored, capsys)


@pytest.fixture
def small_disk(tmp_path):
    """A 16 MiB tmpfs at tmp_path/disk; skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    tool = shutil.which("mount")
    if tool is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    made = subprocess.run(
        [tool, "-t", "tmpfs", "-o", "size=16m", f"titjudge-{uuid.uuid4().hex[:8]}", str(mount)],
        capture_output=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=False)


@pytest.mark.slow
def test_a_real_full_disk_stops_the_run_and_keeps_what_was_stored(
    fault_data, server, small_disk, tmp_path, capsys
):
    cache_dir = small_disk / "cache"
    cfg = config(fault_data, server.url, tmp_path)
    cfg["run"]["cache_dir"] = str(cache_dir)
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(cfg))
    CallCache(cache_dir).close()
    free = shutil.disk_usage(small_disk).free
    (small_disk / "filler").write_bytes(b"\0" * (free - 600 * 1024))  # leave 600 KiB
    # in-process: unlike a file-size limit, a full tmpfs bounds nothing but the run's cache
    code = main(["run", str(path), "--progress-every", "0.01"])
    out, err = capsys.readouterr()
    done = Finished(code, out, err)
    stop = _assert_one_line_stop(done, cache_dir)
    assert stop.startswith("titjudge: error: disk full: ")
    (small_disk / "filler").unlink()  # space freed (opening a cache writes to it, too)
    stored = _answers(cache_dir)
    assert 0 < stored < CALLS
    assert f" {stored} answer" in stop
    _resume_and_check(path, server, cache_dir, stored, capsys)


@pytest.mark.slow
def test_answers_reach_the_cache_before_any_run_file(
    fault_data, server, tmp_path, capsys, monkeypatch
):
    """The run files cannot be written (the disk is full for scores.csv): every answer is in
    the cache anyway, so the re-run asks the server nothing."""
    cfg = config(fault_data, server.url, tmp_path)
    for role in (cfg["describer"], cfg["judges"][0]):
        # the fault suite's 1 s timeout re-sends a call that a loaded machine answers late,
        # and this test counts requests: no call here may time out
        role["timeout"] = 60.0
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(cfg))
    with monkeypatch.context() as patch:
        full_disk.install("scores.csv", patch)
        code = main(["run", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "scores.csv: cannot write (No space left on device)" in err
    assert server.stats.total == CALLS and _answers(tmp_path / "cache") == CALLS
    _resume_and_check(path, server, tmp_path / "cache", CALLS, capsys)
