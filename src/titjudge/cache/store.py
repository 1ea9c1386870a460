"""The on-disk call cache (diskcache: SQLite, safe for several processes on one dir).

Only validated results are stored. Entries are tagged with the model spec so
`titjudge cache clear --model SPEC` can drop one model's answers. The latest run's cache
counts (its calls, hits, misses and writes, counted by the run) are written next to the
cache for `titjudge cache stats`.

A cache that cannot be used is a `CacheError` naming the dir and what is wrong, never a
SQLite traceback: a file that is not a cache (or a corrupt one) when it is opened or read,
and a write that fails (`CacheWriteError`, a full disk above all). A failed write is not an
item's problem: every later write fails too, so the run stops at once; each answer stored
before it stays readable, and a re-run after freeing space resumes from them.
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from titjudge.errors import DataError
from titjudge.files import atomic_write, jsonl_lines, read_json_object

log = logging.getLogger(__name__)
T = TypeVar("T")

STATS_FILE = "last_run_stats.json"
#: what runs learnt besides answers (`CallCache.get_meta`), one JSON object per line
FACTS_FILE = "facts.jsonl"
DB_FILE = "cache.db"
#: what the OS says when a write finds no room (EFBIG: past the process's file-size limit)
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_CORRUPT = ("not a database", "malformed", "corrupt")
#: SQLite reports a write past the file-size limit, or a failing disk, as "disk I/O error"
_IO_HINT = "; is the disk full or failing?"


class CacheError(DataError):
    """The cache dir cannot be used: missing, not a titjudge cache, corrupt or unreadable."""


class CacheWriteError(CacheError):
    """An answer could not be stored (a full disk above all). It ends the run, not one item."""


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


def _is_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or "is full" in str(exc)


def _is_corrupt(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and any(w in str(exc) for w in _CORRUPT)


@dataclass
class Merged:
    """What `CallCache.merge_from` did: answers added, answers already there (the same, or
    another answer to the same request: this cache's kept), facts added."""

    added: int = 0
    same: int = 0
    differed: int = 0
    facts: int = 0


@dataclass
class CacheStats:
    """Answers stored by this process, per model spec. Hits are not counted here: a run
    counts them per model call in its call ledgers (see `titjudge.records.Progress`)."""

    writes: dict[str, int] = field(default_factory=dict)

    def wrote(self, model: str) -> None:
        self.writes[model] = self.writes.get(model, 0) + 1


class CallCache:
    """A key -> JSON-able value store. `directory=None` keeps nothing (no-cache runs)."""

    def __init__(self, directory: str | Path | None, *, create: bool = True):
        """Open (with `create`, make) the cache at `directory`. Without `create` a dir that
        holds no cache is a CacheError ("no cache at DIR"), and nothing is made."""
        self.directory = Path(directory) if directory is not None else None
        self.stats = CacheStats()
        self._lock = threading.Lock()
        self._store: Any = None
        #: set by the first failed write: every later write fails at once with it
        self._broken: CacheWriteError | None = None
        self._facts: dict[str, Any] | None = None
        if self.directory is not None:
            self._store = self._open(self.directory, create)

    @staticmethod
    def _open(directory: Path, create: bool) -> Any:
        import diskcache

        if directory.exists() and not directory.is_dir():
            raise CacheError(f"cache dir {directory} is a file, not a folder")
        if not create and not (directory / DB_FILE).is_file():
            raise CacheError(f"no cache at {directory} (no {DB_FILE} there)")
        try:
            directory.mkdir(parents=True, exist_ok=True)
            # Paid answers are never evicted (eviction "none", no culling on writes, which
            # also saves several SQLite statements per stored call).
            return diskcache.Cache(
                str(directory), tag_index=True, eviction_policy="none", cull_limit=0
            )
        except (OSError, sqlite3.DatabaseError) as exc:
            if _is_full(exc):
                raise CacheWriteError(
                    f"disk full: cannot open the cache at {directory} ({_reason(exc)})"
                ) from None
            raise _unusable(directory, exc) from None

    @property
    def enabled(self) -> bool:
        return self._store is not None

    def _read(self, read: Callable[[], T]) -> T:
        """Run a read of the store; SQLite's complaint becomes one CacheError naming the dir."""
        try:
            return read()
        except sqlite3.DatabaseError as exc:
            raise _unusable(self.directory, exc) from None

    def _write(self, write: Callable[[], T]) -> T:
        """Run a write of the store; the first failure is kept and raised for every later one."""
        if self._broken is not None:
            raise self._broken
        try:
            return write()
        except (OSError, sqlite3.DatabaseError) as exc:
            if _is_corrupt(exc):
                raise _unusable(self.directory, exc) from None
            self._broken = self._write_failed(exc)
            raise self._broken from None

    def _write_failed(self, exc: BaseException) -> CacheWriteError:
        stored = sum(self.stats.writes.values())
        resume = f"{stored} answer{'' if stored == 1 else 's'} stored in this run; a re-run"
        if _is_full(exc):
            return CacheWriteError(
                f"disk full: cannot store answers in the cache at {self.directory} "
                f"({_reason(exc)}); {resume} after freeing space resumes from them"
            )
        return CacheWriteError(
            f"cannot store answers in the cache at {self.directory} ({_reason(exc)}{_IO_HINT}); "
            f"{resume} resumes from them once it can write there"
        )

    def get(self, key: str) -> Any | None:
        return self._read(lambda: self._store.get(key)) if self._store is not None else None

    def set(self, key: str, value: Any, model: str, *, release_claim: bool = False) -> None:
        """Store `value` under `key`; with `release_claim`, this run's claim on the key is
        dropped in the same transaction (one SQLite commit where there were two, and no
        moment at which another run sees neither the claim nor the answer)."""
        if self._store is None:
            return
        store = self._store

        def write() -> None:
            if not release_claim:
                store.set(key, value, tag=model)
                return
            with store.transact():
                store.set(key, value, tag=model)
                store.delete(f"claim:{key}")

        self._write(write)
        with self._lock:
            self.stats.wrote(model)

    # ------------------------------------------------------------------ facts
    # What a run learnt besides answers (an image file's hash and size: `data.image_digests`,
    # a resized image's hash: `models.calls.text_client`): shortcuts, not answers. They are lines appended
    # to FACTS_FILE beside the database (each line one write, so runs sharing the dir do not
    # interleave them), read once per process; one that cannot be written is only logged (the
    # next run does the work again), and a line that does not parse is skipped.

    def get_meta(self, key: str) -> Any | None:
        return self._known_facts().get(key)

    def set_meta(self, key: str, value: Any) -> None:
        facts = self._known_facts()
        if facts.get(key) == value:
            return
        facts[key] = value
        if self.directory is None:
            return
        line = json.dumps({"key": key, "value": value}, separators=(",", ":")) + "\n"
        try:
            with open(self.directory / FACTS_FILE, "a", encoding="utf-8") as handle:
                handle.write(line)
        except OSError as exc:
            log.debug("fact not kept in %s: %s", self.directory, _reason(exc))

    def _known_facts(self) -> dict[str, Any]:
        if self._facts is None:
            self._facts = {}
            path = self.directory / FACTS_FILE if self.directory is not None else None
            try:
                text = path.read_text(encoding="utf-8") if path is not None else ""
            except (OSError, UnicodeDecodeError):
                text = ""
            for line in jsonl_lines(text):
                try:
                    fact = json.loads(line)
                    self._facts[fact["key"]] = fact["value"]
                except (ValueError, TypeError, KeyError):
                    continue
        return self._facts

    # ------------------------------------------------------------------ claims
    # Two runs sharing one cache dir would otherwise both pay for every call they reach at
    # the same time. Before calling a model, a run claims the key (an atomic add); a run
    # that finds a live claim waits for the owner's answer instead of asking again. A claim
    # names its owner (host, pid), so the claims of a killed run are taken over at once.

    def claim(self, key: str, ttl: float) -> bool:
        """True when this process may compute `key` (it now holds the claim)."""
        if self._store is None:
            return True
        me = [socket.gethostname(), os.getpid()]
        store = self._store
        if self._write(lambda: store.add(f"claim:{key}", me, expire=ttl)):
            return True

        def take_over() -> bool:
            """A dead owner's claim taken in one transaction: two runs that find it dead at
            once cannot both take it."""
            with store.transact():
                owner = store.get(f"claim:{key}")
                if owner is None or not _alive(owner):
                    store.set(f"claim:{key}", me, expire=ttl)
                    return True
                return list(owner) == me

        return self._write(take_over)

    def release(self, key: str) -> None:
        """Drop this run's claim. After a failed write nothing is tried: a claim left behind
        names this process, so another run takes it over once this one has ended."""
        if self._store is None or self._broken is not None:
            return
        try:
            self._write(lambda: self._store.delete(f"claim:{key}"))
        except CacheWriteError:  # already kept in _broken: the run's next write raises it
            log.debug("claim on %s not released: %s", key, self._broken)

    def claimed_elsewhere(self, key: str) -> bool:
        owner = self.peek(f"claim:{key}")
        return (
            owner is not None
            and _alive(owner)
            and list(owner) != [socket.gethostname(), os.getpid()]
        )

    def peek(self, key: str) -> Any | None:
        """Read without counting a hit or miss (used while waiting on another run's claim)."""
        return self._read(lambda: self._store.get(key)) if self._store is not None else None

    def __len__(self) -> int:
        return self._read(lambda: len(self._store)) if self._store is not None else 0

    def volume(self) -> int:
        """Bytes on disk."""
        return int(self._read(self._store.volume)) if self._store is not None else 0

    def clear(self, model: str | None = None) -> int:
        """Drop every entry (and every remembered fact), or only the entries of one model
        spec; returns how many entries."""
        if self._store is None:
            return 0
        try:
            if model is not None:
                return int(self._store.evict(model))
            assert self.directory is not None
            (self.directory / FACTS_FILE).unlink(missing_ok=True)
            self._facts = None
            return int(self._store.clear())
        except (OSError, sqlite3.DatabaseError) as exc:
            if _is_corrupt(exc):
                raise _unusable(self.directory, exc) from None
            raise CacheError(f"cache dir {self.directory}: cannot clear ({_reason(exc)})") from None

    def entries(self) -> int:
        """Cached answers, not counting claims in progress."""
        if self._store is None:
            return 0
        query = "SELECT COUNT(*) FROM Cache WHERE key NOT LIKE 'claim:%'"
        return int(self._read(lambda: self._store._sql(query).fetchone()[0]))

    def models(self) -> dict[str, int]:
        """Entries per model spec (reads every tag; fine for a stats command)."""
        if self._store is None:
            return {}
        query = "SELECT tag, COUNT(*) FROM Cache WHERE tag IS NOT NULL GROUP BY tag"
        rows = self._read(lambda: self._store._sql(query).fetchall())
        return {str(tag): int(n) for tag, n in rows}

    def save_run_stats(self, run_name: str, counts: dict[str, Any]) -> None:
        """Keep a run's cache counts (calls, hits, misses, writes, by_model) for `cache stats`,
        written atomically (an old file stays whole). After a failed cache write the run's error
        already names the disk; a stats file that cannot be written then is only logged, so that
        error is the one the user sees."""
        if self.directory is None:
            return
        payload = {"run": run_name, "finished": time.time(), **counts}
        try:
            atomic_write(self.directory / STATS_FILE, json.dumps(payload, indent=2))
        except DataError as exc:
            if self._broken is None:
                raise
            log.info("cache stats not saved: %s", exc)

    def last_run_stats(self) -> dict[str, Any] | None:
        """The latest run's counts, None when none was recorded; a DataError naming the
        file when it is not what `save_run_stats` writes (empty, cut short, edited)."""
        path = self.directory / STATS_FILE if self.directory else None
        if path is None or not path.is_file():
            return None
        found = read_json_object(path, "cache stats file")
        counts = [found.get(name) for name in ("hits", "misses", "writes")]
        if not all(isinstance(n, int) and n >= 0 for n in counts):
            raise DataError(f"{path}: not a cache stats file (no hits, misses and writes counts)")
        return found

    def merge_from(self, other: CallCache, batch: int = 500) -> Merged:
        """Every answer of `other` this cache lacks, copied in with its model tag; claims in
        progress are not answers and stay behind. A key names the request's content, so an
        answer under it in both caches answers the same request: this cache's stands (a
        paid answer is never overwritten) and one that differs is counted. Facts learnt
        (image digests, endpoint dialects) this cache lacks are added too. Writes go in
        transactions of `batch` answers."""
        merged = Merged()
        if self._store is None or other._store is None:
            return merged
        source = other._store
        query = "SELECT key FROM Cache WHERE key NOT LIKE 'claim:%' ORDER BY rowid"
        keys = [row[0] for row in other._read(lambda: source._sql(query).fetchall())]
        for start in range(0, len(keys), batch):
            chunk: list[str] = keys[start : start + batch]
            found = other._read(functools.partial(_tagged, source, chunk))
            self._write(functools.partial(self._merge_chunk, chunk, found, merged))
        for key, value in other._known_facts().items():
            if key not in self._known_facts():
                self.set_meta(key, value)
                merged.facts += 1
        return merged

    def _merge_chunk(self, keys: list[str], found: list[Any], merged: Merged) -> None:
        store = self._store
        with store.transact():
            for key, (value, tag) in zip(keys, found, strict=True):
                if value is None:  # expired or gone since the keys were listed
                    continue
                here = store.get(key)
                if here is None:
                    store.set(key, value, tag=tag)
                    merged.added += 1
                    self.stats.wrote(str(tag))
                elif here == value:
                    merged.same += 1
                else:
                    merged.differed += 1

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def _tagged(store: Any, keys: list[str]) -> list[Any]:
    """Each key's (value, tag) in `store`."""
    return [store.get(key, tag=True) for key in keys]


def _unusable(directory: Path | None, exc: BaseException) -> CacheError:
    """The cache at `directory` cannot be opened or read, with what SQLite or the OS said."""
    if _is_corrupt(exc):
        return CacheError(
            f"cache dir {directory}: not a titjudge cache or a corrupt SQLite database "
            f"({_reason(exc)}); move it aside or delete it"
        )
    hint = _IO_HINT if getattr(exc, "sqlite_errorname", "").startswith("SQLITE_IOERR") else ""
    return CacheError(
        f"cache dir {directory}: cannot open or read the cache ({_reason(exc)}{hint})"
    )


def _alive(owner: Any) -> bool:
    """Whether a claim's owner process still runs (a claim from another host is trusted)."""
    try:
        host, pid = owner
    except (TypeError, ValueError):
        return False
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
