"""The live record of a run in progress: `live.json` in its staging dir, rewritten every
LIVE_INTERVAL seconds while the run lasts and removed before the run dir is committed, so
`titjudge view` can follow a run as its answers arrive and a finished run holds no trace of
it.

What it holds (`LiveState.doc`): the run's name, when it started and when the file was last
written, its phase, the progress counts (`records.Progress`: described, done, failed
items, pairs), the spend so far (with its cost as the run's summary states it: unknown
where a call was not priced), retries and stopped models; per judge the answers so far
(ok, fallback, failed) and the mean score of those scored; and the last RECENT answers
(item, judge, status, score, the rationale's first RATIONALE_CHARS characters, error, the
model that answered). Error text goes through `safety.redact`, as every record's does. The
file is written atomically, so a reader never sees half of it; a write that fails (a full
disk) is skipped, never the run's failure: the run's own files are what count.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from titjudge.records import ItemResult, Progress

LIVE_FILE = "live.json"
#: seconds between two writes of live.json
LIVE_INTERVAL = 2.0
RECENT = 12
RATIONALE_CHARS = 400


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class JudgeSoFar:
    ok: int = 0
    fallback: int = 0
    failed: int = 0
    score_sum: float = 0.0

    def doc(self) -> dict[str, Any]:
        scored = self.ok + self.fallback
        return {
            "ok": self.ok,
            "fallback": self.fallback,
            "failed": self.failed,
            "mean_score": self.score_sum / scored if scored else None,
        }


@dataclass
class LiveState:
    """What a run has answered so far, kept from `Progress.on_item`."""

    name: str
    progress: Progress
    started: str = field(default_factory=_now)
    judges: dict[str, JudgeSoFar] = field(default_factory=dict)
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))

    def item(self, result: ItemResult) -> None:
        from titjudge.safety import redact

        for outcome in result.outcomes:
            judge = self.judges.setdefault(outcome.variant, JudgeSoFar())
            if outcome.status == "failed" or outcome.score is None:
                judge.failed += 1
            else:
                setattr(judge, outcome.status, getattr(judge, outcome.status) + 1)
                judge.score_sum += outcome.score
            self.recent.append(
                {
                    "item_id": result.item.item_id,
                    "prompt_id": result.item.prompt_id,
                    "t2i_model": result.item.t2i_model,
                    "judge": outcome.variant,
                    "status": outcome.status,
                    "score": outcome.score,
                    "rationale": (outcome.rationale or "")[:RATIONALE_CHARS] or None,
                    "error": redact(outcome.error) if outcome.error else None,
                    "answered_by": list(outcome.answered_by),
                }
            )

    def doc(self) -> dict[str, Any]:
        p = self.progress
        spent = p.spent()
        retries, last_retry = p.retries()
        if p.done < p.total:
            phase = "items"
        elif p.pairs_done < p.pairs_total:
            phase = "pairs"
        else:
            phase = "writing"
        return {
            "name": self.name,
            "started": self.started,
            "updated": _now(),
            "phase": phase,
            "total": p.total,
            "described": p.described,
            "done": p.done,
            "failed_items": p.failed_items,
            "pairs_total": p.pairs_total,
            "pairs_done": p.pairs_done,
            "eta_seconds": p.eta(),
            "calls": spent.calls,
            "cost": spent.cost,
            "cost_text": spent.cost_text(),
            "retries": retries,
            "last_retry": last_retry,
            "stopped": p.stopped(),
            "judges": {name: judge.doc() for name, judge in self.judges.items()},
            "recent": list(self.recent),
        }


class LiveRecord:
    """`async with LiveRecord(staging, name, progress)`: live.json kept while the run lasts,
    removed at the end (whatever the end)."""

    def __init__(self, staging: Path, name: str, progress: Progress, interval: float | None = None):
        self.path = Path(staging) / LIVE_FILE
        self.state = LiveState(name, progress)
        self.interval = LIVE_INTERVAL if interval is None else interval
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LiveRecord:
        self.state.progress.on_item = self.state.item
        self.write()
        self._task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.state.progress.on_item = None
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.write()

    def write(self) -> None:
        from titjudge.files import atomic_write

        with contextlib.suppress(OSError, ValueError):
            atomic_write(self.path, json.dumps(self.state.doc(), allow_nan=False) + "\n")


def read_live(path: Path) -> dict[str, Any] | None:
    """A live.json as written (None when absent, or unreadable mid-replace on a filesystem
    without atomic rename)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


__all__ = ["LIVE_FILE", "LIVE_INTERVAL", "LiveRecord", "LiveState", "read_live"]
