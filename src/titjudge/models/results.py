"""What one model call returns (`CallResult`), what a run spent per role (`Usage`), and when
a reply cannot be used as it stands (cut at the token limit, withheld, empty).

Shared by the call layer, the embedding client and the judges; it imports nothing of theirs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from titjudge.models.base import Generation, TokenLogprobs

T = TypeVar("T")


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
    #: the reply stopped at the token limit and the caller chose to keep it (`on_truncation: keep`)
    truncated: bool = False


#: finish reasons that mean the reply was cut at the output cap (OpenAI/litellm "length",
#: Gemini MAX_TOKENS, Anthropic max_tokens)
TRUNCATED = frozenset({"length", "max_tokens", "MAX_TOKENS"})
#: finish reasons that mean the provider withheld or cut the reply for its content
BLOCKED = frozenset(
    {"content_filter", "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII"}
)


def incomplete_reason(gen: Generation, answer_budget: int) -> str | None:
    """Why a reply cannot be used as it stands (cut, blocked, empty), or None when it can."""
    reason = gen.finish_reason
    if reason in TRUNCATED:
        thinking = gen.thinking_tokens or 0
        answer = (gen.tokens_out or 0) - thinking
        cap = gen.max_tokens_sent or answer_budget
        return (
            f"truncated: the reply stopped at the token limit (finish_reason={reason}; "
            f"answer {answer} tokens of max_tokens {answer_budget}, thinking {thinking} tokens, "
            f"cap sent {cap})"
            + (
                "; raise max_tokens, or the thinking budget if thinking used the room"
                if thinking
                else "; raise max_tokens"
            )
        )
    if reason in BLOCKED:
        return f"blocked: the provider withheld the reply (finish_reason={reason})"
    if not (gen.text and gen.text.strip()):
        return f"empty reply (finish_reason={reason})"
    return None


@dataclass
class Usage:
    """Totals for one role (describer, judge, ...) over a run."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    #: of the failures, replies cut at the token limit (finish_reason length / MAX_TOKENS)
    truncated: int = 0
    #: of the failures, replies withheld by a provider's content filter
    blocked: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    latency: float = 0.0

    def add(self, result: CallResult[Any]) -> None:
        """Tokens, cost and latency count only what was paid for in this run (not cache hits)."""
        self.calls += 1
        self.cache_hits += result.cached
        self.failures += not result.ok
        self.truncated += not result.ok and result.finish_reason in TRUNCATED
        self.blocked += not result.ok and result.finish_reason in BLOCKED
        if not result.cached:
            self.tokens_in += result.tokens_in
            self.tokens_out += result.tokens_out
            self.cost += result.cost or 0.0
            self.latency += result.latency


def usage_of(result: CallResult[Any]) -> dict[str, Any]:
    """What a hit reports about the original call (tokens and cost it took once)."""
    return {
        "tokens_in": result.tokens_in,
        "tokens_out": result.tokens_out,
        "cost": result.cost,
        "attempts": result.attempts,
        "logprobs": _logprobs_to(result.logprobs),
        "finish_reason": result.finish_reason,
        "thinking_tokens": result.thinking_tokens,
    }


def from_hit(hit: dict[str, Any], value: Any) -> CallResult[Any]:
    return CallResult(
        ok=True,
        value=value,
        raw=hit["text"],
        cached=True,
        attempts=hit.get("attempts", 0),
        reasked=bool(hit.get("reasked", False)),
        tokens_in=hit.get("tokens_in", 0),
        tokens_out=hit.get("tokens_out", 0),
        cost=hit.get("cost"),
        logprobs=_logprobs_from(hit.get("logprobs")),
        finish_reason=hit.get("finish_reason"),
        thinking_tokens=hit.get("thinking_tokens"),
    )


def _logprobs_to(logprobs: list[TokenLogprobs] | None) -> list[dict[str, Any]] | None:
    return None if logprobs is None else [dataclasses.asdict(lp) for lp in logprobs]


def _logprobs_from(raw: list[dict[str, Any]] | None) -> list[TokenLogprobs] | None:
    return None if raw is None else [TokenLogprobs(**lp) for lp in raw]


__all__ = [
    "BLOCKED",
    "TRUNCATED",
    "CallResult",
    "Usage",
    "from_hit",
    "incomplete_reason",
    "usage_of",
]
