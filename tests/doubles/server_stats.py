"""Counters the fake OpenAI server keeps, readable from any thread and over GET /stats.

Only `/v1/...` requests are counted (polling /stats or /health does not disturb them).
Status 0 means the connection was reset without a response; 499 means the client went
away (e.g. timed out) before the answer was sent.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class RequestRecord:
    """One finished request: wall-clock arrival/finish (time.time()), outcome, body hash,
    and the item it is about (`doubles.server_scripts.request_item`)."""

    arrived: float
    finished: float
    endpoint: str
    status: int
    fault: str | None
    body_hash: str | None
    #: the tokens a tpm-limited server counted for it (prompt + completion once answered)
    tokens: int | None = None
    #: sha256 of the image described, or of the image whose description a judge call carries
    image: str | None = None
    #: sha256 of a judge call's PROMPT section (None for a describe call)
    prompt: str | None = None


class ServerStats:
    """Thread-safe request counters; the server thread writes, tests and benchmarks read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.total = 0
            self.by_endpoint: Counter[str] = Counter()
            self.by_status: Counter[int] = Counter()
            self.by_fault: Counter[str] = Counter()
            self.by_body: Counter[str] = Counter()
            self.ok_by_body: Counter[str] = Counter()
            self.in_flight = 0
            self.max_in_flight = 0
            self.records: list[RequestRecord] = []

    def begin(self, endpoint: str) -> float:
        """Count an arriving request; returns its arrival time."""
        with self._lock:
            # calls only: a GET of the model list (titjudge asks once per endpoint when
            # replies echo the model) is counted by endpoint, not in the totals
            self.total += 0 if endpoint.endswith("/models") else 1
            self.by_endpoint[endpoint] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return time.time()

    def finish(
        self,
        endpoint: str,
        arrived: float,
        status: int,
        fault: str | None,
        body_hash: str | None,
        tokens: int | None = None,
        item: tuple[str | None, str | None] = (None, None),
    ) -> None:
        with self._lock:
            self.in_flight -= 1
            if endpoint.endswith("/models"):  # a listing, not a call: counted by endpoint only
                return
            self.by_status[status] += 1
            if fault is not None:
                self.by_fault[fault] += 1
            if body_hash is not None:
                self.by_body[body_hash] += 1
                if status == 200 and fault is None:
                    self.ok_by_body[body_hash] += 1
            self.records.append(
                RequestRecord(
                    arrived, time.time(), endpoint, status, fault, body_hash, tokens, *item
                )
            )

    def duplicates(self, ok_only: bool = False) -> int:
        """Requests whose body repeated an earlier identical one.

        With `ok_only`, only clean 200 answers count: the repeats a provider would bill.
        """
        with self._lock:
            counts = self.ok_by_body if ok_only else self.by_body
            return sum(n - 1 for n in counts.values() if n > 1)

    @property
    def timestamps(self) -> list[float]:
        """Arrival times of finished requests, in finishing order."""
        with self._lock:
            return [r.arrived for r in self.records]

    def max_concurrent_in_log(self) -> int:
        """Largest overlap of [arrived, finished] intervals among finished requests (a cross-check)."""
        with self._lock:
            events = sorted(
                [(r.arrived, 1) for r in self.records] + [(r.finished, -1) for r in self.records]
            )
        best = current = 0
        for _, step in events:
            current += step
            best = max(best, current)
        return best

    def snapshot(self, records: int = 1000) -> dict[str, Any]:
        """A JSON-ready copy; the request log is cut to its last `records` entries."""
        with self._lock:
            return {
                "total": self.total,
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "by_endpoint": dict(self.by_endpoint),
                "by_status": {str(k): v for k, v in self.by_status.items()},
                "by_fault": dict(self.by_fault),
                "distinct_bodies": len(self.by_body),
                "duplicates": sum(n - 1 for n in self.by_body.values() if n > 1),
                "ok_duplicates": sum(n - 1 for n in self.ok_by_body.values() if n > 1),
                "records": [asdict(r) for r in self.records[-records:]] if records else [],
            }


class SlidingWindowLimiter:
    """At most `rpm` admitted requests in any `window` seconds (a sliding log of admissions).

    Rejected requests do not count against the window. Not thread-safe: the server calls
    it from its event loop thread only.
    """

    def __init__(self, rpm: int, window: float = 60.0):
        if rpm < 1 or window <= 0:
            raise ValueError("rpm must be >= 1 and window > 0")
        self.rpm = rpm
        self.window = window
        self._admitted: deque[float] = deque()

    def admit(self, now: float | None = None) -> float | None:
        """None when admitted, else seconds until the oldest admission leaves the window."""
        now = time.monotonic() if now is None else now
        while self._admitted and self._admitted[0] <= now - self.window:
            self._admitted.popleft()
        if len(self._admitted) < self.rpm:
            self._admitted.append(now)
            return None
        return self._admitted[0] + self.window - now
