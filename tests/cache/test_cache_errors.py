"""A cache that cannot be used is one line naming the dir, never a SQLite traceback; a failed
write (a full disk) stops the run with the count of answers already stored."""

import errno
import os
import sqlite3

import pytest

from titjudge.cache.store import STATS_FILE, CacheError, CacheWriteError, CallCache
from titjudge.cli import main
from titjudge.errors import DataError


def _corrupt(directory):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cache.db").write_bytes(b"this is no SQLite database " * 200)
    return directory


def _cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.out, captured.err


def test_a_corrupt_cache_db_is_one_line_naming_the_dir(tmp_path):
    bad = _corrupt(tmp_path / "cache")
    with pytest.raises(CacheError) as caught:
        CallCache(bad)
    message = str(caught.value)
    assert str(bad) in message and "corrupt SQLite database" in message
    assert "move it aside or delete it" in message and "\n" not in message


def test_a_database_broken_after_opening_fails_its_reads_with_the_same_line(tmp_path):
    cache = CallCache(tmp_path / "cache")
    cache.set("k", {"text": "v"}, "m")

    def broken(*_args, **_kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    cache._store.get = broken
    for read in (lambda: cache.get("k"), lambda: cache.peek("k")):
        with pytest.raises(CacheError, match="corrupt SQLite database"):
            read()


@pytest.mark.parametrize("command", [["cache", "stats"], ["cache", "clear"]])
def test_cache_commands_on_a_corrupt_cache_exit_2(command, tmp_path, capsys):
    bad = _corrupt(tmp_path / "cache")
    code, _, err = _cli([*command, "--cache-dir", str(bad)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"cache dir {bad}: not a titjudge cache" in err


@pytest.mark.parametrize("command", [["cache", "stats"], ["cache", "clear"]])
def test_cache_commands_on_a_file_exit_2(command, tmp_path, capsys):
    afile = tmp_path / "notes.txt"
    afile.write_text("not a folder")
    code, _, err = _cli([*command, "--cache-dir", str(afile)], capsys)
    assert code == 2 and f"cache dir {afile} is a file, not a folder" in err


@pytest.mark.parametrize("command", [["cache", "stats"], ["cache", "clear"]])
def test_cache_commands_never_create_a_missing_cache(command, tmp_path, capsys):
    typo = tmp_path / "cahce"
    code, _, err = _cli([*command, "--cache-dir", str(typo)], capsys)
    assert code == 2 and f"no cache at {typo}" in err
    assert not typo.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = _cli([*command, "--cache-dir", str(empty)], capsys)
    assert code == 2 and f"no cache at {empty}" in err
    assert list(empty.iterdir()) == []


def test_a_run_still_creates_its_cache(tmp_path):
    CallCache(tmp_path / "new" / "cache").close()
    assert (tmp_path / "new" / "cache" / "cache.db").is_file()


@pytest.mark.parametrize(
    ("text", "said"),
    [("", "not valid JSON"), ('{"hits": 3', "not valid JSON"), ('{"a": 1}', "not a cache stats")],
)
def test_cache_stats_copes_with_a_garbled_stats_file(text, said, tmp_path, capsys):
    cache = CallCache(tmp_path / "cache")
    cache.set("k", 1, "litellm:a")
    cache.close()
    (tmp_path / "cache" / STATS_FILE).write_text(text)
    code, out, _ = _cli(["cache", "stats", "--cache-dir", str(tmp_path / "cache")], capsys)
    assert code == 0 and "entries: 1" in out
    last = [line for line in out.splitlines() if line.startswith("last run")]
    assert len(last) == 1 and "unreadable" in last[0] and said in last[0]


def test_cache_stats_counts_answers_not_claims(tmp_path, capsys):
    cache = CallCache(tmp_path / "cache")
    cache.set("k", 1, "litellm:a")
    assert cache.claim("other", ttl=60)
    cache.close()
    code, out, _ = _cli(["cache", "stats", "--cache-dir", str(tmp_path / "cache")], capsys)
    assert code == 0 and "entries: 1 " in out


# ----------------------------------------------------------------------------- failed writes


FULL = [
    sqlite3.OperationalError("database or disk is full"),
    OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
]


@pytest.mark.parametrize("failure", FULL, ids=["sqlite-full", "enospc"])
def test_a_full_disk_is_one_write_error_kept_for_every_later_write(failure, tmp_path):
    cache = CallCache(tmp_path / "cache")
    cache.set("a", 1, "m")
    cache.set("b", 2, "m")
    real_set, calls = cache._store.set, []

    def full(*args, **kwargs):
        calls.append(args)
        raise failure

    cache._store.set = full
    cache._store.add = full
    with pytest.raises(CacheWriteError) as caught:
        cache.set("c", 3, "m")
    message = str(caught.value)
    assert message.startswith(
        f"disk full: cannot store answers in the cache at {tmp_path / 'cache'}"
    )
    assert "2 answers stored in this run" in message and "resumes from them" in message
    # later writes (answers and claims) fail at once, without touching the full disk again
    with pytest.raises(CacheWriteError, match="disk full"):
        cache.set("d", 4, "m")
    with pytest.raises(CacheWriteError, match="disk full"):
        cache.claim("e", ttl=60)
    assert len(calls) == 1
    cache.release("e")  # a claim left behind is taken over later: releasing never raises
    cache._store.set = real_set
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, 2, None)


def test_another_write_failure_names_the_dir_and_asks_about_the_disk(tmp_path):
    cache = CallCache(tmp_path / "cache")

    def failing(*_args, **_kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    cache._store.set = failing
    with pytest.raises(CacheWriteError) as caught:
        cache.set("k", 1, "m")
    assert f"cannot store answers in the cache at {tmp_path / 'cache'} (disk I/O error" in str(
        caught.value
    )
    assert "is the disk full or failing?" in str(caught.value)


COUNTS = {"calls": 1, "hits": 0, "misses": 1, "writes": 1}


def test_stats_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    cache = CallCache(tmp_path / "cache")
    cache.set("k", 1, "m")
    cache.save_run_stats("first", COUNTS)
    before = (tmp_path / "cache" / STATS_FILE).read_text()

    def no_space(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(DataError, match="No space left"):  # a healthy cache: the user is told
        cache.save_run_stats("second", COUNTS)
    assert (tmp_path / "cache" / STATS_FILE).read_text() == before
    cache._store.set = no_space
    with pytest.raises(CacheWriteError):
        cache.set("j", 2, "m")
    # after a failed write the run's error already says it all: the stats are only logged
    cache.save_run_stats("third", COUNTS)
    assert (tmp_path / "cache" / STATS_FILE).read_text() == before


def test_a_clear_that_cannot_write_says_so(tmp_path, capsys):
    cache = CallCache(tmp_path / "cache")
    cache.set("k", 1, "m")

    def full(*_args, **_kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    cache._store.clear = full
    with pytest.raises(CacheError, match=r"cache dir .*cache: cannot clear \(database or disk"):
        cache.clear()
