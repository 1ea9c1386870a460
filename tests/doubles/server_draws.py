"""The fake server's seeded draws: which requests fail, and how long each one waits.

Every draw is a hash of (seed, what, body hash, attempt), so it does not depend on the
order in which concurrent requests arrive, and a retry (the next attempt) draws afresh.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from statistics import NormalDist

from doubles.server_request import Fault, fault_variant

_NORMAL = NormalDist()


def lognormal_sigma(median: float, p95: float) -> float:
    """The sigma of a lognormal with this median and 95th percentile: ln(p95 / median) / z95."""
    return math.log(p95 / median) / _NORMAL.inv_cdf(0.95)


class SeededDraws:
    """Mixed into `FakeOpenAIApp`, which sets `seed`, `latency`, `jitter`, `latency_sigma`,
    `fault_rate` and `faults`.

    The wait before an answer is `latency` plus a uniform `[0, jitter)`; with
    `latency_sigma` > 0, `latency` is instead the median of a lognormal draw
    `latency x exp(latency_sigma x z)`, z standard normal (a thinking model's long tail:
    median 2 s and p95 8 s is `latency=2, latency_sigma=lognormal_sigma(2, 8)` ~ 0.843).
    """

    seed: int
    latency: float
    jitter: float
    latency_sigma: float
    fault_rate: float
    faults: tuple[str, ...]

    def _unit(self, *parts: object) -> float:
        """A uniform [0, 1) draw fixed by the seed and `parts`."""
        digest = hashlib.sha256(":".join(map(str, (self.seed, *parts))).encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def _draw_fault(self, body_hash: str, attempt: int, kinds: Sequence[str]) -> Fault | None:
        if (
            not kinds
            or self.fault_rate <= 0
            or self._unit("fault", body_hash, attempt) >= self.fault_rate
        ):
            return None
        kind = kinds[min(int(self._unit("kind", body_hash, attempt) * len(kinds)), len(kinds) - 1)]
        variant = (
            fault_variant(self._unit("variant", body_hash, attempt))
            if kind == "invalid_schema"
            else None
        )
        return Fault(kind, variant=variant)

    def _delay(self, body_hash: str, attempt: int) -> float:
        base = self.latency
        if self.latency_sigma > 0 and base > 0:
            # (u + 2^-65) keeps the quantile off 0, where the normal's inverse is infinite
            u = self._unit("latency", body_hash, attempt) + 2.0**-65
            base = self.latency * math.exp(self.latency_sigma * _NORMAL.inv_cdf(u))
        return base + self.jitter * self._unit("jitter", body_hash, attempt)
