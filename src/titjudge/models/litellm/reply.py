"""Reading a reply (a litellm response object, or on the direct path the chat completion's
JSON itself, read the same way): the text (without an inline thinking block), token counts, the
price litellm already worked out, the finish reason, any log-probabilities, and the model the
reply says answered (`response.model`: an OpenAI-compatible body's `model`; for Gemini, litellm
1.x sets it from the body's `modelVersion`, minus any `@version` suffix).
"""

from __future__ import annotations

import re
from typing import Any

from titjudge.models.core.base import Generation, PermanentError, TransientError
from titjudge.records.calls import TokenLogprobs

_THINK_BLOCK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


def generation_from(response: Any) -> Generation:
    """The first choice of a reply as a Generation; no choices is a permanent error."""
    choices = _part(response, "choices") or []
    if not choices:
        raise PermanentError("the provider's reply has no choices (an empty 'choices' list)")
    choice = choices[0]
    usage = _part(response, "usage")
    # litellm prices every reply it can while building the response; asking again costs
    # ~1 ms of CPU per call (and an exception for unpriced models): read its answer instead.
    hidden = getattr(response, "_hidden_params", None) or {}
    raw_cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    cost = float(raw_cost) if raw_cost is not None else None
    details = _part(usage, "completion_tokens_details")
    thinking = _part(details, "reasoning_tokens")
    _raise_choice_error(choice)
    prompt_details = _part(usage, "prompt_tokens_details")
    cached = _part(prompt_details, "cached_tokens")
    message = _part(choice, "message")
    text = _part(message, "content") or ""
    refusal = _part(message, "refusal")
    # a server without a reasoning parser returns Qwen3's thinking inline: it is not the answer
    text = _THINK_BLOCK.sub("", text, count=1) if text.lstrip().startswith("<think>") else text
    return Generation(
        text=text,
        tokens_in=_part(usage, "prompt_tokens"),
        tokens_out=_part(usage, "completion_tokens"),
        cost=cost,
        finish_reason=_part(choice, "finish_reason"),
        logprobs=_logprobs(_part(choice, "logprobs")),
        thinking_tokens=int(thinking) if thinking else None,
        cached_tokens=int(cached) if cached else None,
        model=_answering_model(response),
        refusal=refusal.strip() if isinstance(refusal, str) and refusal.strip() else None,
        reasoning=_reasoning(message),
    )


def _reasoning(message: Any) -> str | None:
    """The reasoning a server split off the answer: vLLM's `reasoning_content` (<= 0.10) or
    `reasoning` (>= 0.11; https://docs.vllm.ai/en/v0.11.2/features/reasoning_outputs/),
    which litellm hands on as `reasoning_content`."""
    for name in ("reasoning_content", "reasoning"):
        found = _part(message, name)
        if found is None:
            extra = getattr(message, "provider_specific_fields", None) or {}
            found = extra.get(name) if isinstance(extra, dict) else None
        if isinstance(found, str) and found.strip():
            return found
    return None


#: choice-level error codes worth another attempt: rate limit, timeout, the provider's 5xx
_TRANSIENT_CODES = re.compile(
    r"^(?:408|429|5\d\d)$|server_error|rate_limit|timeout|overloaded|unavailable", re.I
)


def _raise_choice_error(choice: Any) -> None:
    """An error reported inside a 200 reply's choice (OpenRouter: `finish_reason: "error"`
    with `choices[0].error {code, message}`, "Some tokens sent: Embeds error information within
    the choices array", https://openrouter.ai/docs/api-reference/errors) as TransientError
    when its code is a rate limit or a server error (then retried), else PermanentError, with
    the provider's code and message. litellm keeps the error in the choice's
    `provider_specific_fields` (and reports finish_reason "stop")."""
    extra = _part(choice, "provider_specific_fields") or {}
    extra = extra if isinstance(extra, dict) else {}
    error = _part(choice, "error") or extra.get("error")
    finish = extra.get("native_finish_reason") or _part(choice, "finish_reason")
    if error is None and finish != "error":
        return
    code = _part(error, "code")
    text = _part(error, "message") or "no message"
    provider = _part(_part(error, "metadata"), "provider_name")
    said = f"code {code}: {text}" if code is not None else str(text)
    reason = f"the provider reported an error in its reply (finish_reason=error): {said}" + (
        f" (provider {provider})" if provider else ""
    )
    if code is not None and _TRANSIENT_CODES.search(str(code)):
        limited = str(code) == "429" or "rate_limit" in str(code)
        raise TransientError(reason, rate_limited=limited)
    raise PermanentError(reason)


def _part(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None) if obj is not None else None


def _answering_model(response: Any) -> str | None:
    model = _part(response, "model")
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
