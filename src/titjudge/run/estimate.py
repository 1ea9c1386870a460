"""What a run (or an ablation grid's rows) would spend now, before anything is sent.

The run's own graph (`agents.graph.drive`: describe, judge, fallback; the pairwise judges) runs
over every item with a `models.calls.estimate_probe.EstimateProbe` as the context's `probe`: each call builds the request and
the cache key the run would, a cached answer is a hit, and every other call is counted, not
sent (see that module). Nothing here sends a request, claims a key or loads a model; an image
an earlier run read is not read again (its size and hash are remembered in the cache dir).

Per model and role: the calls, their input tokens (the rendered prompts; images at their
provider's documented cost, as `tpm` pacing counts them), their output and thinking tokens
(the mean of the cache's answers of the same model in the same role when it holds some, a
pilot's; else the caps) and the dollars at the model's rates (`models.core.prices`). `usd_max`
assumes every call writes its whole output and thinking caps, is asked once more when it must
be validated (the re-ask carries its first reply), and every description it reads is at its
cap: never below what the run spends, as far as the input estimate holds (one token per 3.5
characters, on the safe side for English).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from titjudge.config.schema import RunConfig
from titjudge.metrics.evaluate import HumanData
from titjudge.models.calls.estimate_probe import REASK_TOKENS, EstimateProbe, Miss
from titjudge.models.core.prices import Rates, batch_rates_for, rates_for
from titjudge.models.hub import ModelHub
from titjudge.records import Progress
from titjudge.records.items import Item
from titjudge.records.spec import parse_model_spec
from titjudge.run.context import run_context, run_hub
from titjudge.run.runner import load_run_data


@dataclass
class Line:
    """The calls one model would be sent in one role, and what they would cost."""

    model: str
    role: str
    calls: int = 0
    #: of the calls asked, those the cache answers (not counted in `calls`)
    cached: int = 0
    tokens_in: int = 0
    tokens_out: float = 0.0
    thinking_tokens: float = 0.0
    tokens_in_max: int = 0
    tokens_out_max: int = 0
    #: where the output estimate comes from: the cache's answers, or the caps
    basis: str = "caps"
    usd: float | None = 0.0
    usd_max: float | None = 0.0
    #: where the rates come from (None: unpriced, so `usd` is unknown)
    price: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "role": self.role,
            "calls": self.calls,
            "cached": self.cached,
            "tokens_in": self.tokens_in,
            "tokens_out": round(self.tokens_out),
            "thinking_tokens": round(self.thinking_tokens),
            "tokens_in_max": self.tokens_in_max,
            "tokens_out_max": self.tokens_out_max,
            "basis": self.basis,
            "price": self.price,
            "usd": _usd(self.usd),
            "usd_max": _usd(self.usd_max),
        }


@dataclass
class Estimate:
    """Every line, and the runs (configs) and items they cover."""

    lines: list[Line]
    runs: list[str]
    items: int
    unpriced: list[str] = field(default_factory=list)
    #: the calls the cache answers, in every line, those with nothing to send too
    cached: int = 0

    @property
    def calls(self) -> int:
        return sum(line.calls for line in self.lines)

    @property
    def usd(self) -> float | None:
        return _total(line.usd for line in self.lines)

    @property
    def usd_max(self) -> float | None:
        return _total(line.usd_max for line in self.lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "items": self.items,
            "calls": self.calls,
            "cached": self.cached,
            "usd": _usd(self.usd),
            "usd_max": _usd(self.usd_max),
            "unpriced": self.unpriced,
            "lines": [line.to_json() for line in self.lines],
        }


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _total(values: Any) -> float | None:
    """The sum, or None (unknown) when any part is unknown."""
    found = list(values)
    return None if any(v is None for v in found) else float(sum(found))


async def estimate_runs(configs: list[RunConfig], limit: int | None = None) -> Estimate:
    """What running `configs` one after another (an ablation's rows share one cache) would
    send now. Every config reads its cache dir; the first one's is shared, as in a grid."""
    first = configs[0]
    hub = run_hub(first.run, budget=False)  # nothing is sent: no budget to hold
    cache = hub.cache
    loaded: dict[Any, tuple[list[Item], HumanData | None]] = {}
    n_items = 0
    try:
        probe = EstimateProbe()
        for config in configs:
            data_key = (config.data.model_dump_json() if config.data else None, limit)
            if data_key not in loaded:
                loaded[data_key] = load_run_data(config, limit)
            items, human = loaded[data_key]
            n_items = max(n_items, len(items))
            await probe_run(config, hub, items, human, probe=probe)
        return summarise(probe, [c.name for c in configs], n_items)
    finally:
        await hub.aclose()
        cache.close()


async def probe_run(
    config: RunConfig,
    hub: ModelHub,
    items: list[Item],
    human: HumanData | None,
    *,
    probe: EstimateProbe,
) -> None:
    """The run's graph (`agents.graph.drive`: describe, judge, fallback; then its pairwise
    judges) over every item, with `probe` as the calls' mode."""
    from titjudge.agents.graph import drive

    ctx, _ = run_context(config, hub, human, Progress(total=len(items)), probe=probe)
    await drive(items, ctx)


def summarise(counted: EstimateProbe, runs: list[str], items: int) -> Estimate:
    """What the estimate's probe `counted` (its misses and hits) as lines per model and role,
    priced."""
    lines: dict[tuple[str, str], Line] = {}
    for (model, role), seen in counted.seen.items():
        lines.setdefault((model, role), Line(model, role)).cached = seen.hits
    rates: dict[str, Rates | None] = {}
    for miss in counted.misses.values():
        line = lines.setdefault((miss.model, miss.role), Line(miss.model, miss.role))
        if miss.model not in rates:
            priced = batch_rates_for if miss.batch else rates_for
            rates[miss.model] = priced(parse_model_spec(miss.model), miss.price)
        _add(line, miss, counted, rates[miss.model])
    unpriced = sorted({line.model for line in lines.values() if line.calls and line.price is None})
    for line in lines.values():
        if line.model in unpriced:
            line.usd = line.usd_max = None
    ordered = sorted(
        lines.values(), key=lambda line: (line.role != "describer", line.role, line.model)
    )
    cached = sum(line.cached for line in lines.values())
    return Estimate([line for line in ordered if line.calls], runs, items, unpriced, cached)


def _add(line: Line, miss: Miss, counted: EstimateProbe, rates: Rates | None) -> None:
    seen = counted.seen.get((miss.model, miss.role))
    cap = miss.answer_cap + miss.thinking_cap
    if seen is not None and seen.answers:
        out, thinking = seen.mean_out(), seen.mean_thinking()
        line.basis = f"cache: mean of {seen.answers} answers"
    else:
        out, thinking = float(cap), float(miss.thinking_cap)
    in_max, out_max = miss.tokens_in + miss.extra_in_max, cap
    if miss.may_reask:  # asked once more, with its first reply and the re-ask prompt
        in_max += in_max + miss.answer_cap + REASK_TOKENS
        out_max += cap
    line.calls += 1
    line.tokens_in += miss.tokens_in
    line.tokens_out += out
    line.thinking_tokens += thinking
    line.tokens_in_max += in_max
    line.tokens_out_max += out_max
    if rates is not None:
        line.price = rates.source
        line.usd = (line.usd or 0.0) + miss.tokens_in * rates.input + out * rates.output
        line.usd_max = (line.usd_max or 0.0) + in_max * rates.input + out_max * rates.output


__all__ = ["Estimate", "Line", "estimate_runs", "probe_run", "summarise"]
