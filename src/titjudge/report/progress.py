"""The run's progress on screen: a rich bar on a terminal, one-line records elsewhere.

Both show every phase with its own count (described, judged, pairs), the failed items, the
cache hits of the run's model calls, the spend so far and the ETA of the current phase. On
a terminal the bar has a row per phase. When stderr is not a terminal (CI, `> log`), a plain
record without terminal codes is printed every `interval` seconds while the run lasts and
once at the end of each phase:

    progress: described 40/60 · judged 35/60 · pairs 0/0 · failed 1 · cache hits 12/75 · spend $0.0123 · ETA 0:00:41

Retries after transient errors (429s, 5xx, timeouts, refused connections) show as they
happen, before the calls that retry end: `· retries 7 (last: RateLimitError) ·`. A model its
circuit breaker stops (`run.stop_after`) is named from then on, and in a log a record is
printed the moment it stops: `· failed 12 · stopped: litellm:openai/judge (connection refused
(http://127.0.0.1:9/v1)) ·`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import sys
from typing import IO, Any

from titjudge.records import Progress

#: seconds between two plain records when stderr is not a terminal
RECORD_INTERVAL = 10.0
#: seconds between two refreshes of the bar's text (its ETA) on a terminal
BAR_REFRESH = 1.0


def eta_text(seconds: float | None) -> str:
    """`ETA 0:00:41`; `ETA --` while there is no rate yet."""
    if seconds is None:
        return "ETA --"
    return f"ETA {datetime.timedelta(seconds=round(seconds))}"


def stats_text(progress: Progress) -> str:
    """Failed items, cache hits of calls, spend and ETA."""
    usage = progress.spent()
    retried, last = progress.retries()
    retries = f"retries {retried} (last: {last}) · " if retried else ""
    stopped = progress.stopped()
    halted = f"stopped: {', '.join(stopped)} · " if stopped else ""
    return (
        f"failed {progress.failed_items} · {halted}cache hits {usage.cache_hits}/{usage.calls} · "
        f"{retries}spend {usage.cost_text()} · {eta_text(progress.eta())}"
    )


def progress_line(progress: Progress, title: str = "") -> str:
    """One line for every phase and the run's totals (a plain record without `progress: `)."""
    counts = (
        f"described {progress.described}/{progress.total} · "
        f"judged {progress.done}/{progress.total} · "
        f"pairs {progress.pairs_done}/{progress.pairs_total} · {stats_text(progress)}"
    )
    return f"{title} · {counts}" if title else counts


class ProgressDisplay:
    """Shows `progress` while a run lasts (`async with`); shows nothing when `show` is False.

    `stream` (default stderr) decides the form: a terminal gets the rich bar, anything else
    plain records every `interval` seconds and at each phase's end. `title` names the run
    among others (an ablation's `row 1/3 sharp`)."""

    def __init__(
        self,
        progress: Progress,
        *,
        show: bool,
        title: str = "",
        stream: IO[str] | None = None,
        interval: float = RECORD_INTERVAL,
    ):
        self.progress, self.show, self.title = progress, show, title
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._ticker: asyncio.Task[None] | None = None
        #: the stopped models the last plain record named
        self._stopped_shown = 0

    async def __aenter__(self) -> ProgressDisplay:
        if not self.show:
            return self
        if self.terminal:
            self._start_bar()
            self.progress.on_update = lambda _: self._refresh_bar()
            self.progress.on_phase_end = lambda _p, _phase: self._refresh_bar()
        else:
            self.progress.on_phase_end = lambda _p, _phase: self._record()
            self.progress.on_update = lambda _p: self._record_new_stop()
        self._ticker = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        if self._bar is not None:
            self._refresh_bar()
            self._bar.stop()
        self.progress.on_update = self.progress.on_phase_end = None

    async def _tick(self) -> None:
        pause = BAR_REFRESH if self.terminal else self.interval
        while True:
            await asyncio.sleep(pause)
            if self.terminal:
                self._refresh_bar()
            else:
                self._record()

    def _record_new_stop(self) -> None:
        """A record at once when a model has stopped since the last one (a log otherwise
        names it only at the next interval)."""
        stopped = len(self.progress.stopped())
        if stopped > self._stopped_shown:
            self._record()

    def _record(self) -> None:
        self._stopped_shown = len(self.progress.stopped())
        self.stream.write(f"progress: {progress_line(self.progress, self.title)}\n")
        self.stream.flush()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        self._bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[info]}"),
            console=Console(file=self.stream),
            transient=False,
        )
        for phase in ("described", "judged"):
            self._tasks[phase] = self._bar.add_task(
                self._label(phase), total=self.progress.total, info=""
            )
        self._bar.start()

    def _label(self, phase: str) -> str:
        return f"{self.title} {phase}" if self.title else phase

    def _refresh_bar(self) -> None:
        """Counts per phase; the run's totals on the row of the last phase begun."""
        p = self.progress
        if p.pairs_total and "pairs" not in self._tasks:
            self._tasks["pairs"] = self._bar.add_task(
                self._label("pairs"), total=p.pairs_total, info=""
            )
        done = {"described": p.described, "judged": p.done, "pairs": p.pairs_done}
        last = next(reversed(self._tasks))
        for phase, task in self._tasks.items():
            info = stats_text(p) if phase == last else ""
            self._bar.update(task, completed=done[phase], info=info)
