"""When a reply cannot be used as it stands (cut at the token limit, withheld, empty), and a
cached answer's usage back and forth. What one model call returns (`CallResult`) and what a
run spent per role (`Usage`, `sum_costs`, `total_cost`) live in `titjudge.records.calls`.

Shared by the call layer, the embedding client and the judges; it imports nothing of theirs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from titjudge.models.core.base import Generation
from titjudge.records.calls import (
    BLOCKED,
    TRUNCATED,
    CallResult,
    TokenLogprobs,
)


def incomplete_reason(gen: Generation, answer_budget: int) -> str | None:
    """Why a reply cannot be used as it stands (cut, blocked, empty), or None when it can."""
    reason = gen.finish_reason
    if reason in TRUNCATED:
        thinking = gen.thinking_tokens or 0
        answer = (gen.tokens_out or 0) - thinking
        cap = gen.max_tokens_sent or answer_budget
        out = gen.tokens_out or 0
        head = (
            f"truncated: the reply stopped at the token limit (finish_reason={reason}; "
            f"answer {answer} tokens of max_tokens {answer_budget}, thinking {thinking} tokens, "
            f"cap sent {cap})"
        )
        if not thinking and gen.tokens_in is not None and 0 < out < cap:
            # a server cuts the reply where its context ends and still says "length"
            # (llama-cpp-python clips max_tokens to n_ctx - prompt; llama-server, Ollama alike)
            return (
                f"{head}; it stopped {cap - out} tokens short of the cap, when prompt and reply "
                f"reached {gen.tokens_in + out} tokens: the server's context window ended it, so "
                "raising max_tokens will not help; serve the model with a longer context "
                "(llama-cpp-python --n_ctx, llama-server -c, vLLM --max-model-len, Ollama "
                "num_ctx) or send a shorter prompt"
            )
        return head + (
            "; raise max_tokens, or the thinking budget if thinking used the room"
            if thinking
            else "; raise max_tokens"
        )
    if reason in BLOCKED:
        return f"blocked: the provider withheld the reply (finish_reason={reason})"
    if gen.refusal is not None:
        return (
            f"blocked: the model refused (message.refusal, finish_reason={reason}): {gen.refusal}"
        )
    if not (gen.text and gen.text.strip()):
        if gen.reasoning:
            return (
                f"empty reply: the answer is only in the reply's reasoning field "
                f"(reasoning_content, {len(gen.reasoning)} characters, finish_reason={reason}): "
                "the server split the whole output off as reasoning (vLLM served with "
                "--reasoning-parser) and no answer followed it; serve without "
                "--reasoning-parser, or turn thinking off (thinking: off, which sends "
                "chat_template_kwargs enable_thinking false), or raise max_tokens"
            )
        return f"empty reply (finish_reason={reason})"
    return None


def withheld(gen: Generation) -> bool:
    """Whether the model refused (its own `refusal` text): a failure counted as blocked."""
    return gen.refusal is not None


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
        "cached_tokens_in": result.cached_tokens_in,
        "answered_by": result.answered_by,
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
        cached_tokens_in=hit.get("cached_tokens_in") or 0,
        # absent from answers cached before titjudge recorded it: unknown, never guessed
        answered_by=hit.get("answered_by"),
    )


def _logprobs_to(logprobs: list[TokenLogprobs] | None) -> list[dict[str, Any]] | None:
    return None if logprobs is None else [dataclasses.asdict(lp) for lp in logprobs]


def _logprobs_from(raw: list[dict[str, Any]] | None) -> list[TokenLogprobs] | None:
    return None if raw is None else [TokenLogprobs(**lp) for lp in raw]


__all__ = ["from_hit", "incomplete_reason", "withheld", "usage_of"]
