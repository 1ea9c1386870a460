"""Reading a litellm reply: the text (without an inline thinking block), token counts, the
price litellm already worked out, the finish reason, any log-probabilities, and the model the
reply says answered (`response.model`: an OpenAI-compatible body's `model`; for Gemini, litellm
1.x sets it from the body's `modelVersion`, minus any `@version` suffix).
"""

from __future__ import annotations

import re
from typing import Any

from titjudge.models.core.base import Generation, PermanentError, TokenLogprobs

_THINK_BLOCK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


def generation_from(response: Any) -> Generation:
    """The first choice of a litellm response as a Generation; no choices is a permanent error."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise PermanentError("the provider's reply has no choices (an empty 'choices' list)")
    choice = choices[0]
    usage = getattr(response, "usage", None)
    # litellm prices every reply it can while building the response; asking again costs
    # ~1 ms of CPU per call (and an exception for unpriced models): read its answer instead.
    hidden = getattr(response, "_hidden_params", None) or {}
    raw_cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    cost = float(raw_cost) if raw_cost is not None else None
    details = getattr(usage, "completion_tokens_details", None)
    thinking = getattr(details, "reasoning_tokens", None) if details is not None else None
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(prompt_details, "cached_tokens", None) if prompt_details is not None else None
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None) or ""
    # a server without a reasoning parser returns Qwen3's thinking inline: it is not the answer
    text = _THINK_BLOCK.sub("", text, count=1) if text.lstrip().startswith("<think>") else text
    return Generation(
        text=text,
        tokens_in=getattr(usage, "prompt_tokens", None),
        tokens_out=getattr(usage, "completion_tokens", None),
        cost=cost,
        finish_reason=getattr(choice, "finish_reason", None),
        logprobs=_logprobs(getattr(choice, "logprobs", None)),
        thinking_tokens=int(thinking) if thinking else None,
        cached_tokens=int(cached) if cached else None,
        model=_answering_model(response),
    )


def _answering_model(response: Any) -> str | None:
    model = getattr(response, "model", None)
    return model.strip() if isinstance(model, str) and model.strip() else None


def _logprobs(raw: Any) -> list[TokenLogprobs] | None:
    content = (
        getattr(raw, "content", None)
        if raw is not None and not isinstance(raw, dict)
        else (raw or {}).get("content")
    )
    if not content:
        return None
    out = []
    for entry in content:
        top = {
            str(_field(alt, "token")): float(_field(alt, "logprob"))
            for alt in _field(entry, "top_logprobs") or []
        }
        out.append(
            TokenLogprobs(
                token=str(_field(entry, "token")), logprob=float(_field(entry, "logprob")), top=top
            )
        )
    return out


def _field(obj: Any, name: str) -> Any:
    """litellm returns logprob entries as dicts or as objects, depending on the provider."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
