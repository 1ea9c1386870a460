"""What a model's tokens cost, without importing litellm.

Three sources, in order:
- a model that runs in this process or in Ray (`hf:`, `embed:`, `replay:`) costs nothing in
  API spend: $0 per token;
- a model's own `price: {input, output, cached_input}` option ($ per 1M tokens), for what
  litellm does not price (a self-hosted vLLM may say 0);
- litellm's bundled price map (`model_prices_and_context_window_backup.json`, the map litellm
  itself reads under `LITELLM_LOCAL_MODEL_COST_MAP`), read as JSON: importing litellm takes
  seconds, reading the file tens of milliseconds.

A model none of them prices is unknown (None), never $0.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from titjudge.models.core.base import Generation
from titjudge.records.spec import ModelSpec

#: backends that run in the process or in Ray: no API spend
LOCAL_BACKENDS = frozenset({"hf", "embed", "clip", "replay"})
PRICE_MAP_FILE = "model_prices_and_context_window_backup.json"
PER_MILLION = 1_000_000


@dataclass(frozen=True)
class Rates:
    """$ per token: input, output (thinking is billed as output), and cached input (a prompt
    prefix the provider served from its cache); `source` says where they came from."""

    input: float
    output: float
    cached_input: float
    source: str

    def cost(self, tokens_in: int, tokens_out: int, cached_in: int = 0) -> float:
        """What a call with these token counts costs (`cached_in` is part of `tokens_in`)."""
        cached = min(max(cached_in, 0), tokens_in)
        return (
            (tokens_in - cached) * self.input
            + cached * self.cached_input
            + tokens_out * self.output
        )


FREE = Rates(0.0, 0.0, 0.0, "local")


def own_rates(spec: ModelSpec, price: Any | None) -> Rates | None:
    """The rates titjudge applies itself: $0 for a local model, the model's `price` option
    (an object with `input`, `output` and optional `cached_input`, $ per 1M tokens) when set;
    None: the provider's (litellm's) own price stands."""
    if spec.backend in LOCAL_BACKENDS:
        return FREE
    if price is None:
        return None
    cached = price.cached_input if price.cached_input is not None else price.input
    return Rates(
        price.input / PER_MILLION, price.output / PER_MILLION, cached / PER_MILLION, "price option"
    )


def reply_cost(rates: Rates, value: Generation) -> float | None:
    """A reply's cost at `rates`; unknown (None) when a priced model's reply reports no usage
    (none, or zero tokens both ways, which litellm fills in when a server sends no `usage`;
    a local model's is $0 whatever it reports)."""
    if rates is FREE:
        return 0.0
    if not value.tokens_in and not value.tokens_out:
        return None
    return rates.cost(value.tokens_in or 0, value.tokens_out or 0, value.cached_tokens or 0)


def rates_for(spec: ModelSpec, price: Any | None = None) -> Rates | None:
    """The model's rates from the three sources above, or None when nothing prices it."""
    found = own_rates(spec, price)
    if found is not None or spec.backend != "litellm":
        return found
    return litellm_rates(spec.model_id)


def batch_rates_for(spec: ModelSpec, price: Any | None = None) -> Rates | None:
    """The model's rates under `batch: true`: litellm's `_batches` prices where its map has
    them, else half of what `rates_for` says (the providers' batch discount; litellm's
    `batch_cost_calculator` falls back the same way)."""
    full = rates_for(spec, price)
    if full is None:
        return None
    half = Rates(full.input / 2, full.output / 2, full.cached_input / 2, f"{full.source} (batch)")
    if not full.source.startswith("litellm:"):
        return half
    entry = price_map().get(full.source.removeprefix("litellm:"), {})
    listed = [
        entry.get(f"{name}_batches") for name in ("input_cost_per_token", "output_cost_per_token")
    ]
    if not all(isinstance(rate, (int, float)) for rate in listed):
        return half
    cached = entry.get("cache_read_input_token_cost_batches")
    return Rates(
        float(listed[0]),
        float(listed[1]),
        float(cached) if isinstance(cached, (int, float)) else half.cached_input,
        half.source,
    )


def litellm_rates(model_id: str) -> Rates | None:
    """litellm's price of `provider/model` as its map keys it (OpenAI's models without the
    `openai/` prefix, others with their provider's), or None when the map has none."""
    table = price_map()
    provider, _, bare = model_id.partition("/")
    for key in (model_id, bare) if bare else (model_id,):
        entry = table.get(key)
        if not isinstance(entry, dict):
            continue
        if key == bare and not str(entry.get("litellm_provider", "")).startswith(provider):
            continue
        rates = _entry_rates(entry, key)
        if rates is not None:
            return rates
    return None


def _entry_rates(entry: dict[str, Any], key: str) -> Rates | None:
    input_rate = entry.get("input_cost_per_token")
    output_rate = entry.get("output_cost_per_token")
    if not isinstance(input_rate, (int, float)) or not isinstance(output_rate, (int, float)):
        return None
    cached = entry.get("cache_read_input_token_cost")
    cached_rate = float(cached) if isinstance(cached, (int, float)) else float(input_rate)
    return Rates(float(input_rate), float(output_rate), cached_rate, f"litellm:{key}")


@functools.cache
def price_map() -> dict[str, Any]:
    """litellm's bundled price map ({} when litellm or its map is not installed)."""
    path = price_map_path()
    if path is None:
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def price_map_path() -> Path | None:
    """Where litellm's bundled map is, found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / PRICE_MAP_FILE
        if path.is_file():
            return path
    return None


__all__ = [
    "FREE",
    "LOCAL_BACKENDS",
    "Rates",
    "batch_rates_for",
    "reply_cost",
    "litellm_rates",
    "own_rates",
    "price_map",
    "rates_for",
]
