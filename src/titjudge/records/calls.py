"""What one model call returns (`CallResult`) and what calls took (`Usage`, `sum_costs`,
`total_cost`): the recorded facts every stage reads. Kept low, below the models and judges that
fill them in, so records, metrics and reports read them without importing either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass
class TokenLogprobs:
    """Log-probabilities at one generated position: the sampled token and the top-k."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass
class CallResult(Generic[T]):
    """One logical model call: a validated value, or a failure with its reason."""

    ok: bool
    value: T | None = None
    raw: str | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    reasked: bool = False
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    logprobs: list[TokenLogprobs] | None = None
    finish_reason: str | None = None
    #: of tokens_out, thinking/reasoning tokens (None: the provider did not say)
    thinking_tokens: int | None = None
    #: of tokens_in, prompt tokens served from the provider's prompt cache (billed at its
    #: cached-input rate; 0 when the provider did not say)
    cached_tokens_in: int = 0
    #: the reply stopped at the token limit and the caller chose to keep it (`on_truncation: keep`)
    truncated: bool = False
    #: the model that answered, as its reply says (see `Backend.answered_by`); None when no
    #: reply came, or it did not say, or it was cached before titjudge recorded it
    answered_by: str | None = None
    #: the provider or the model refused for the content (a filter's 400, the model's own
    #: refusal) without a finish reason in BLOCKED saying so: counted as blocked
    blocked: bool = False
    #: what was done to the request's images to fit the provider's byte limit (one note per
    #: image changed: format, quality, size before and after); None when nothing
    image_fit: list[str] | None = None


#: finish reasons that mean the reply was cut at the output cap (OpenAI/litellm "length",
#: Gemini MAX_TOKENS, Anthropic max_tokens)
TRUNCATED = frozenset({"length", "max_tokens", "MAX_TOKENS"})
#: finish reasons that mean the provider withheld or cut the reply for its content
BLOCKED = frozenset(
    {"content_filter", "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII"}
)


def sum_costs(costs: Iterable[float | None]) -> float | None:
    """What several calls cost together: unknown (None) when any one's price is unknown, or
    when there were no calls; never a partial sum that reads as the whole."""
    total, n = 0.0, 0
    for cost in costs:
        if cost is None:
            return None
        total, n = total + cost, n + 1
    return total if n else None


@dataclass
class Usage:
    """What calls took: counts, tokens, money and time, for one role or a whole run.

    Tokens, cost and latency count only what was paid for in this run, so a cache hit adds
    a call and a hit but nothing else (it costs 0). Cost is kept honestly: `priced_cost`
    sums the prices the provider or litellm reported, and `unpriced_calls` counts the paid
    calls that came back without a price (a model litellm has no price for and no `price`
    option names, an embedding call through litellm). A model that runs in the process or in
    Ray costs $0 of API spend: its calls are priced, at 0. `cost` is the total only when every paid call
    was priced, else None: unknown, never a made-up 0.
    """

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    #: of the failures, replies cut at the token limit (finish_reason length / MAX_TOKENS)
    truncated: int = 0
    #: of the failures, replies withheld by a provider's content filter
    blocked: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    #: of tokens_out, thinking/reasoning tokens (where the provider said)
    thinking_tokens: int = 0
    #: of tokens_in, prompt tokens the provider served from its prompt cache (where it said)
    cached_tokens_in: int = 0
    priced_cost: float = 0.0
    unpriced_calls: int = 0
    latency: float = 0.0
    #: of the answered text calls (cache hits included), those whose answer does not record
    #: which model gave it (cached before titjudge recorded it, or a provider that did not
    #: say); embedding calls (answered_by recorded since, but no raw reply kept) are not
    #: counted here
    unrecorded_model: int = 0
    #: calls per model that answered them, as the replies say (hits included: a cached answer
    #: was given by the model it records); see `models.calls.provenance`
    answered_by: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, result: CallResult[Any]) -> Usage:
        """One call's share."""
        paid = not result.cached
        return cls(
            answered_by={result.answered_by: 1} if result.answered_by else {},
            # a text answer carries its text (`raw`); an embedding's vector does not
            unrecorded_model=int(result.ok and result.raw is not None and not result.answered_by),
            calls=1,
            cache_hits=int(result.cached),
            failures=int(not result.ok),
            truncated=int(not result.ok and result.finish_reason in TRUNCATED),
            blocked=int(not result.ok and (result.blocked or result.finish_reason in BLOCKED)),
            tokens_in=result.tokens_in if paid else 0,
            tokens_out=result.tokens_out if paid else 0,
            thinking_tokens=(result.thinking_tokens or 0) if paid else 0,
            cached_tokens_in=result.cached_tokens_in if paid else 0,
            priced_cost=(result.cost or 0.0) if paid else 0.0,
            unpriced_calls=int(paid and result.cost is None),
            latency=result.latency if paid else 0.0,
        )

    def add(self, result: CallResult[Any]) -> None:
        """Count one more call (in place: the ledger a client keeps per role)."""
        self.__iadd__(Usage.of(result))

    def __iadd__(self, other: Usage) -> Usage:
        for f in _FIELDS:
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        for model, count in other.answered_by.items():
            self.answered_by[model] = self.answered_by.get(model, 0) + count
        return self

    def __add__(self, other: Usage) -> Usage:
        return dataclasses.replace(self, answered_by=dict(self.answered_by)).__iadd__(other)

    def __sub__(self, other: Usage) -> Usage:
        """What was added since `other` (an earlier snapshot of the same ledger)."""
        since = Usage(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in _FIELDS})
        for model, count in self.answered_by.items():
            left = count - other.answered_by.get(model, 0)
            if left:
                since.answered_by[model] = left
        return since

    @property
    def cost(self) -> float | None:
        """The total cost, or None when some paid call's price is unknown."""
        return None if self.unpriced_calls else self.priced_cost

    def cost_text(self) -> str:
        """`$0.0123`; `$0.0123 + 2 unpriced calls` when some are unknown; `cost unknown`
        when no paid call was priced. Never `$0.0000` for a cost nobody reported."""
        if not self.unpriced_calls:
            return f"${self.priced_cost:.4f}"
        unpriced = f"{self.unpriced_calls} unpriced call{'s' if self.unpriced_calls > 1 else ''}"
        if self.priced_cost:
            return f"${self.priced_cost:.4f} + {unpriced}"
        return f"cost unknown ({unpriced})"

    def text(self) -> str:
        """One line: calls, cache hits, failures (cut, blocked), tokens, cost."""
        cut = ", ".join(
            f"{count} {name}"
            for name, count in (("truncated", self.truncated), ("blocked", self.blocked))
            if count
        )
        return (
            f"{self.calls} calls, {self.cache_hits} cache hits, {self.failures} failures"
            f"{f' ({cut})' if cut else ''}, {self.tokens_in}+{self.tokens_out} tokens, "
            f"{self.cost_text()}"
        )

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Usage:
        """Back from `to_json` (a run's summary.json); `cost` is derived, so not read."""
        found = cls(**{f.name: obj[f.name] for f in _FIELDS if f.name in obj})
        answered = obj.get("answered_by")
        if isinstance(answered, dict):
            found.answered_by = {str(k): int(v) for k, v in answered.items()}
        return found

    def to_json(self) -> dict[str, Any]:
        """Every counter, plus `cost`: a number when known, null when unknown."""
        return {
            **{f.name: getattr(self, f.name) for f in _FIELDS},
            "answered_by": dict(sorted(self.answered_by.items())),
            "cost": self.cost,
        }


#: the counters (added and subtracted field by field); `answered_by` is merged apart
_FIELDS = tuple(f for f in dataclasses.fields(Usage) if f.name != "answered_by")


def total_cost(costs: Iterable[float | None]) -> float | None:
    """The sum of costs, or None when there are none or any is unknown (None): a partial
    sum is not a total, and an unknown price is not 0. The rule `Usage.cost` follows."""
    known = list(costs)
    if not known or any(cost is None for cost in known):
        return None
    return sum(cost for cost in known if cost is not None)
