"""Where a variant's scores came from, and whether its model ran to the end: what stands
beside a variant's number wherever it is shown. A judge with a `fallback` scores the items
its own calls failed with another judge's scores; a model its circuit breaker stopped
(`run.stop_after`) sent none of its other calls. The run records one `VariantOrigin` per
variant in summary.json (`RunSummary.origins`, via `variant_origins`); every view reads it
there (`RunRecord.origin`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from titjudge.errors import ModelSpecError
from titjudge.records.percent import percent
from titjudge.records.spec import parse_model_spec


class StatusCounts(BaseModel):
    """A variant's items by status (summary.json's `variants`): scored by its judge (`ok`),
    by its fallback, or failed."""

    ok: int = 0
    fallback: int = 0
    failed: int = 0

    @property
    def scored(self) -> int:
        """Items with a score: its judge's own or its fallback's."""
        return self.ok + self.fallback

    @property
    def total(self) -> int:
        return self.ok + self.fallback + self.failed

    def add(self, status: str) -> None:
        """Count one item of `status` (ok, fallback, failed)."""
        setattr(self, status, getattr(self, status) + 1)


class VariantOrigin(BaseModel):
    """Where one variant's scores came from and whether its own model was stopped: what
    stands beside its number wherever it is shown (a variant that fell back for most items
    shows mostly another judge's work; one that fell back for all has no number of its own)."""

    #: the judge that scored the items its own judge failed (None: it has none)
    fallback: str | None = None
    #: the model its own judge calls (None: a judge without a model, e.g. lexical)
    model: str | None = None
    #: its scored rows (ok + fallback) and, of them, those its fallback scored
    n_scored: int = 0
    n_fallback: int = 0
    #: n_fallback / n_scored; None when nothing was scored
    fallback_share: float | None = None
    #: its model was stopped for the run by its circuit breaker (`run.stop_after`); None: not
    #: known (an evaluation of a scores file, outside a run)
    stopped: bool | None = None

    @classmethod
    def of(
        cls,
        counts: StatusCounts,
        fallback: str | None = None,
        model: str | None = None,
        stopped: bool | None = None,
    ) -> VariantOrigin:
        """From a variant's status counts (ok, fallback, failed)."""
        scored, n_fallback = counts.scored, counts.fallback
        share = n_fallback / scored if scored else None
        return cls(
            fallback=fallback,
            model=model,
            n_scored=scored,
            n_fallback=n_fallback,
            fallback_share=share,
            stopped=stopped,
        )

    @property
    def fallback_only(self) -> bool:
        """Every score came from the fallback: the variant has no number of its own."""
        return self.n_scored > 0 and self.n_fallback == self.n_scored

    @property
    def mostly_fallback(self) -> bool:
        """More than half of its scores came from its fallback."""
        return self.fallback_share is not None and self.fallback_share > 0.5

    @property
    def degraded(self) -> bool:
        """Its model was stopped, or most of its scores are its fallback's (not exit 0)."""
        return bool(self.stopped) or self.mostly_fallback

    def percent(self) -> str:
        """The fallback's share as a whole percent (`62%`, `<1%`); `?` when not known."""
        share = self.fallback_share
        if share is None:
            return "?"
        return "<1%" if 0 < share < 0.01 else percent(share, 0)

    def count_text(self) -> str:
        """`30 of 48 (62%)`: the fallback's scores of all scored."""
        return f"{self.n_fallback} of {self.n_scored} ({self.percent()})"

    def share_text(self) -> str:
        """`48 of 48 (100%) from lexical`; `none` when nothing came from a fallback."""
        if not self.n_fallback:
            return "none"
        return f"{self.count_text()}{f' from {self.fallback}' if self.fallback else ''}"

    def note(self, variant: str) -> str | None:
        """One line saying where `variant`'s scores came from and that its model was stopped;
        None when all its scores are its own and its model ran to the end."""
        parts = self.reasons()
        return f"{variant}: {'; '.join(parts)}" if parts else None

    def reasons(self) -> list[str]:
        """What `note` says, clause by clause: its scores from its fallback, the stop."""
        parts = []
        source = f"its fallback {self.fallback}" if self.fallback else "its fallback"
        if self.fallback_only:
            parts.append(
                f"no number of its own: all {self.n_scored} of its scores came from {source}"
            )
        elif self.n_fallback:
            parts.append(f"{self.count_text()} of its scores came from {source}")
        if self.stopped:
            model = f" {self.model}" if self.model else ""
            parts.append(
                f"its model{model} was stopped by its circuit breaker (run.stop_after); "
                "its other calls were not sent"
            )
        return parts


def _spec(model: str) -> str:
    """A model spec as the circuit breakers name it (`<backend>:<id>`, stripped)."""
    try:
        return str(parse_model_spec(model))
    except ModelSpecError:
        return model


def variant_origins(
    counts: Mapping[str, StatusCounts],
    fallbacks: Mapping[str, str | None],
    models: Mapping[str, str | None],
    stopped: Iterable[str],
) -> dict[str, VariantOrigin]:
    """Each variant's origin (summary.json's `origins`) from its status counts, its fallback
    judge, the model its judge calls and the models the run stopped."""
    halted = {_spec(model) for model in stopped}
    found = {}
    for name, per in counts.items():
        model = models.get(name)
        found[name] = VariantOrigin.of(
            per,
            fallback=fallbacks.get(name),
            model=model,
            stopped=model is not None and _spec(model) in halted,
        )
    return found


__all__ = ["VariantOrigin", "variant_origins"]
