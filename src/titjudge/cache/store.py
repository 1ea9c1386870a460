"""The on-disk call cache (diskcache: SQLite, safe for several processes on one dir).

Only validated results are stored. Entries are tagged with the model spec so
`titjudge cache clear --model SPEC` can drop one model's answers. The latest run's cache
counts (its calls, hits, misses and writes, counted by the run) are written next to the
cache for `titjudge cache stats`.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.errors import ConfigError
from titjudge.files import atomic_write, read_json_object

STATS_FILE = "last_run_stats.json"


@dataclass
class CacheStats:
    """Answers stored by this process, per model spec. Hits are not counted here: a run
    counts them per model call in its call ledgers (see `titjudge.records.Progress`)."""

    writes: dict[str, int] = field(default_factory=dict)

    def wrote(self, model: str) -> None:
        self.writes[model] = self.writes.get(model, 0) + 1


class CallCache:
    """A key -> JSON-able value store. `directory=None` keeps nothing (no-cache runs)."""

    def __init__(self, directory: str | Path | None):
        self.directory = Path(directory) if directory is not None else None
        self.stats = CacheStats()
        self._lock = threading.Lock()
        self._store: Any = None
        if self.directory is not None:
            import diskcache

            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                # Paid answers are never evicted (eviction "none", no culling on writes, which
                # also saves several SQLite statements per stored call).
                self._store = diskcache.Cache(
                    str(self.directory), tag_index=True, eviction_policy="none", cull_limit=0
                )
            except OSError as exc:
                raise ConfigError(
                    f"cache dir {self.directory}: cannot open ({exc.strerror or exc})"
                ) from None

    @property
    def enabled(self) -> bool:
        return self._store is not None

    def get(self, key: str) -> Any | None:
        return self._store.get(key) if self._store is not None else None

    def set(self, key: str, value: Any, model: str) -> None:
        if self._store is None:
            return
        self._store.set(key, value, tag=model)
        with self._lock:
            self.stats.wrote(model)

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
        if self._store.add(f"claim:{key}", me, expire=ttl):
            return True
        owner = self._store.get(f"claim:{key}")
        if owner is None or not _alive(owner):
            self._store.set(f"claim:{key}", me, expire=ttl)
            return True
        return list(owner) == me

    def release(self, key: str) -> None:
        if self._store is not None:
            self._store.delete(f"claim:{key}")

    def claimed_elsewhere(self, key: str) -> bool:
        owner = self._store.get(f"claim:{key}") if self._store is not None else None
        return (
            owner is not None
            and _alive(owner)
            and list(owner) != [socket.gethostname(), os.getpid()]
        )

    def peek(self, key: str) -> Any | None:
        """Read without counting a hit or miss (used while waiting on another run's claim)."""
        return self._store.get(key) if self._store is not None else None

    def __len__(self) -> int:
        return len(self._store) if self._store is not None else 0

    def volume(self) -> int:
        """Bytes on disk."""
        return int(self._store.volume()) if self._store is not None else 0

    def clear(self, model: str | None = None) -> int:
        """Drop every entry, or only those of one model spec; returns how many."""
        if self._store is None:
            return 0
        return int(self._store.evict(model) if model is not None else self._store.clear())

    def entries(self) -> int:
        """Cached answers, not counting claims in progress."""
        if self._store is None:
            return 0
        row = self._store._sql("SELECT COUNT(*) FROM Cache WHERE key NOT LIKE 'claim:%'").fetchone()
        return int(row[0])

    def models(self) -> dict[str, int]:
        """Entries per model spec (reads every tag; fine for a stats command)."""
        counts: dict[str, int] = {}
        if self._store is None:
            return counts
        rows = self._store._sql(
            "SELECT tag, COUNT(*) FROM Cache WHERE tag IS NOT NULL GROUP BY tag"
        ).fetchall()
        for tag, n in rows:
            counts[str(tag)] = int(n)
        return counts

    def save_run_stats(self, run_name: str, counts: dict[str, Any]) -> None:
        """Keep a run's cache counts (calls, hits, misses, writes, by_model) for `cache stats`."""
        if self.directory is None:
            return
        payload = {"run": run_name, "finished": time.time(), **counts}
        atomic_write(self.directory / STATS_FILE, json.dumps(payload, indent=2))

    def last_run_stats(self) -> dict[str, Any] | None:
        path = self.directory / STATS_FILE if self.directory else None
        if path is None or not path.is_file():
            return None
        return read_json_object(path, "cache stats file")

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


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
