"""`repeats: N`: run a sampling judge N times per item and score with the median.

Sample k is the same request with `sample = k` (a distinct cache key and seed, at the
configured temperature), so sample 0 is exactly what a non-repeated run asked and
raising N later pays only for the new samples. Every sample is stored in the outcome's
`details["samples"]`; `details["repeats"]` holds the per-sample scores (None for a
failed sample, in sample order) and their spread: sample standard deviation (n-1) and
interquartile range (numpy's linear percentiles). The item's score is the median of the
samples that succeeded, and it fails only when every sample failed; how many failed is
recorded. The rationale shown is that of the sample closest to the median.

The metric's spread across repeats (pairwise accuracy etc. computed with sample k's
scores alone, for each k) is the evaluator's job: `repeat_score_rows` gives its input.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from titjudge.judges.base import Judge, SamplingJudge
from titjudge.models.core.clients import CallMode
from titjudge.records.calls import sum_costs
from titjudge.records.outcomes import JudgeInput, JudgeOutcome
from titjudge.records.repeats import spread


class RepeatedJudge(Judge):
    """Wraps a `SamplingJudge`; same config, name and inputs, N samples per item."""

    def __init__(self, inner: SamplingJudge, repeats: int):
        if repeats < 2:
            raise ValueError("RepeatedJudge needs at least 2 repeats")
        super().__init__(inner.config)
        self.inner = inner
        self.repeats = repeats
        self.needs_description = inner.needs_description

    @property
    def model(self) -> str:
        return self.inner.model

    def kind_facts(self) -> dict[str, Any]:
        return {
            **self.inner.kind_facts(),
            "repeats": self.repeats,
            "repeat_score": "median of samples",
        }

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        samples = await asyncio.gather(
            *(self.inner.score(replace(given, sample=k), probe=probe) for k in range(self.repeats))
        )
        return combine_samples(self.name, list(samples))


def combine_samples(name: str, samples: list[JudgeOutcome]) -> JudgeOutcome:
    """One outcome from N samples: median score, every sample kept, usage summed."""
    scores = [s.score if s.status == "ok" else None for s in samples]
    good = [score for score in scores if score is not None]
    stats = spread(good)
    errors = {str(k): s.error for k, s in enumerate(samples) if s.status != "ok"}
    record = {
        "n": len(samples),
        "scores": scores,
        **stats,
        "n_failed": len(errors),
        "errors": errors,
    }
    kept = [
        {
            "sample": k,
            "score": s.score,
            "status": s.status,
            "rationale": s.rationale,
            "error": s.error,
            "details": s.details,
            "raw": s.raw,
        }
        for k, s in enumerate(samples)
    ]
    if not good:
        outcome = JudgeOutcome.failed(
            name, f"all {len(samples)} samples failed; first: {samples[0].error}"
        )
    else:
        median = stats["median"]
        assert median is not None
        scored = [(s, s.score) for s in samples if s.score is not None]
        nearest = min(scored, key=lambda pair: abs(pair[1] - median))[0]
        outcome = JudgeOutcome(
            variant=name,
            status="ok",
            score=round(median, 6),
            raw=nearest.raw,
            rationale=f"[median of {len(good)}/{len(samples)} samples; stdev {stats['stdev']:.4g}, "
            f"IQR {stats['iqr']:.4g}] {nearest.rationale or ''}".strip(),
        )
    outcome.details = {"repeats": record, "samples": kept}
    outcome.tokens_in = sum(s.tokens_in for s in samples)
    outcome.tokens_out = sum(s.tokens_out for s in samples)
    outcome.cost = sum_costs(s.cost for s in samples)
    outcome.latency = sum(s.latency for s in samples)
    outcome.cached = all(s.cached for s in samples)
    for sample in samples:
        for model in sample.answered_by:
            outcome.note_model(model)
    return outcome


__all__ = ["RepeatedJudge", "combine_samples"]
