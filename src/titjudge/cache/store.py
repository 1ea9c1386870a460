"""The on-disk call cache (diskcache: SQLite, safe for several processes on one dir).

Only validated results are stored. Entries are tagged with the model spec so
`titjudge cache clear --model SPEC` can drop one model's answers. Hit/miss counts of
the latest run are written next to the cache for `titjudge cache stats`.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.errors import ConfigError

STATS_FILE = "last_run_stats.json"


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, model: str, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)
        per = self.by_model.setdefault(model, {"hits": 0, "misses": 0, "writes": 0})
        per[outcome] += 1


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
                self._store = diskcache.Cache(str(self.directory), tag_index=True, size_limit=2**40)
            except OSError as exc:
                raise ConfigError(f"cache dir {self.directory}: cannot open ({exc.strerror or exc})") from None

    @property
    def enabled(self) -> bool:
        return self._store is not None

    def get(self, key: str, model: str) -> Any | None:
        value = self._store.get(key) if self._store is not None else None
        with self._lock:
            self.stats.count(model, "hits" if value is not None else "misses")
        return value

    def set(self, key: str, value: Any, model: str) -> None:
        if self._store is None:
            return
        self._store.set(key, value, tag=model)
        with self._lock:
            self.stats.count(model, "writes")

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

    def models(self) -> dict[str, int]:
        """Entries per model spec (reads every tag; fine for a stats command)."""
        counts: dict[str, int] = {}
        if self._store is None:
            return counts
        rows = self._store._sql("SELECT tag, COUNT(*) FROM Cache GROUP BY tag").fetchall()
        for tag, n in rows:
            counts[str(tag)] = int(n)
        return counts

    def save_run_stats(self, run_name: str) -> None:
        if self.directory is None:
            return
        payload = {"run": run_name, "finished": time.time(), "hits": self.stats.hits,
                   "misses": self.stats.misses, "writes": self.stats.writes, "by_model": self.stats.by_model}
        (self.directory / STATS_FILE).write_text(json.dumps(payload, indent=2), encoding="utf-8")

    def last_run_stats(self) -> dict[str, Any] | None:
        path = self.directory / STATS_FILE if self.directory else None
        if path is None or not path.is_file():
            return None
        return dict(json.loads(path.read_text(encoding="utf-8")))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
