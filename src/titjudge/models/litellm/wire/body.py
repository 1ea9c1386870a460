"""Which `litellm:` models can go straight on the wire, and the bytes they send there.

A model whose provider speaks OpenAI's chat-completions wire format unchanged, `openai`
(OpenAI's API, or any server at an `api_base` named as `openai/<model>`) and `hosted_vllm`
(vLLM, SGLang, llama.cpp, TGI, Ollama's /v1: `hosted_vllm/<model>` at an `api_base`), needs
no translation: the direct path (`wire.client`) posts the body litellm would post, built
here from the same arguments the backend hands `litellm.acompletion`
(`LiteLLMBackend.request_kwargs`). What litellm does to them, and so what this does:

- the model is sent without its provider prefix (`openai/gpt-4o` goes as `gpt-4o`);
- the body is `model`, `messages`, then OpenAI's parameters in the order litellm lists them
  (`litellm.constants.DEFAULT_CHAT_COMPLETION_PARAM_VALUES`), then `extra_body` merged in at
  the top level (the OpenAI SDK's `extra_body`), then any other parameter the config passes
  (a server's own sampler settings: vLLM's `top_k`, `repetition_penalty`);
- OpenAI's reasoning models (o-series, gpt-5) take `max_completion_tokens`, not `max_tokens`
  (OpenAI's chat API reference: `max_tokens` "is not compatible with o-series models");
- `openai` bodies are encoded as the OpenAI SDK encodes them (compact JSON, UTF-8), the
  others as litellm's own HTTP handler does (`json.dumps` with its defaults).

`tests/models/test_wire_transport.py` sends the same requests both ways to one loopback
server and compares the bytes that arrive.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

#: OpenAI's chat-completions parameters, in the order litellm puts them in a body
OPENAI_PARAMS = (
    "functions",
    "function_call",
    "temperature",
    "top_p",
    "n",
    "stream_options",
    "stop",
    "max_tokens",
    "max_completion_tokens",
    "modalities",
    "prediction",
    "audio",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "user",
    "response_format",
    "seed",
    "tools",
    "tool_choice",
    "logprobs",
    "top_logprobs",
    "parallel_tool_calls",
    "reasoning_effort",
    "verbosity",
    "web_search_options",
    "service_tier",
    "safety_identifier",
    "prompt_cache_key",
    "prompt_cache_retention",
    "store",
    "metadata",
)
#: the arguments that say how a request is sent, not what it says
SENDING = frozenset(
    {"model", "messages", "timeout", "num_retries", "max_retries", "api_base", "api_key"}
)
#: litellm's own arguments, which mean something to litellm rather than to the server: a
#: model whose params set one is sent through litellm
LITELLM_ONLY = frozenset(
    {
        "custom_llm_provider",
        "api_version",
        "drop_params",
        "allowed_openai_params",
        "additional_drop_params",
        "mock_response",
        "fallbacks",
        "caching",
        "base_model",
        "input_cost_per_token",
        "output_cost_per_token",
        "thinking",
        "stream",
        "extra_headers",
    }
)
#: the providers sent direct, and whose encoding they take: the OpenAI SDK's (litellm sends
#: `openai` through it) or litellm's own handler's (`hosted_vllm`)
DIRECT_PROVIDERS = {"openai": "sdk", "hosted_vllm": "litellm"}
OPENAI_BASE = "https://api.openai.com/v1"


@dataclass(frozen=True)
class WireRoute:
    """Where and how one model's requests go on the direct path."""

    provider: str
    #: the endpoint's base URL (the requests go to `<base>/chat/completions`)
    base: str
    #: the model's name as sent
    model: str
    #: encoded as the OpenAI SDK encodes (compact); else as `json.dumps` does
    compact: bool
    #: `max_tokens` goes as `max_completion_tokens` (OpenAI's reasoning models)
    completion_tokens: bool

    @property
    def url(self) -> str:
        return f"{self.base.rstrip('/')}/chat/completions"


def direct_route(
    model_id: str, api_base: str | list[str] | None, params: dict[str, Any], family: str
) -> WireRoute | str:
    """The direct route of a model, or why it goes through litellm: a provider whose wire
    format litellm translates, several endpoints (litellm's Router spreads them), or a
    parameter that is litellm's own."""
    provider, slash, name = model_id.partition("/")
    if not slash or provider not in DIRECT_PROVIDERS:
        return f"litellm translates {provider or model_id!r}'s wire format"
    if isinstance(api_base, list):
        return "several endpoints: litellm's Router spreads the calls over them"
    own = sorted(LITELLM_ONLY.intersection(params))
    if own:
        return f"params {', '.join(own)} are litellm's own"
    base = api_base or _default_base(provider)
    if base is None:
        return f"{provider} needs an api_base"
    return WireRoute(
        provider=provider,
        base=base,
        model=name,
        compact=DIRECT_PROVIDERS[provider] == "sdk",
        completion_tokens=family == "openai_reasoning",
    )


def _default_base(provider: str) -> str | None:
    """The base URL litellm uses when the config names none: OpenAI's (or the variables the
    OpenAI SDK and litellm read), vLLM's HOSTED_VLLM_API_BASE."""
    if provider == "openai":
        return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_BASE
    return os.environ.get("HOSTED_VLLM_API_BASE") or None


def wire_body(route: WireRoute, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of one request, from the arguments the litellm path is given."""
    body: dict[str, Any] = {"model": route.model, "messages": kwargs["messages"]}
    given = {k: v for k, v in kwargs.items() if v is not None}
    if route.completion_tokens and "max_tokens" in given:
        given["max_completion_tokens"] = given.pop("max_tokens")
    for name in OPENAI_PARAMS:
        if name in given:
            body[name] = given[name]
    extras = {
        name: value
        for name, value in given.items()
        if name not in body and name not in SENDING and name != "extra_body"
    }
    extra_body = kwargs.get("extra_body") or {}
    body.update(extra_body)  # litellm merges the caller's extra_body first, then the rest
    body.update(extras)
    return body


def encode(route: WireRoute, body: dict[str, Any]) -> bytes:
    """`body` as the bytes that go on the wire."""
    if route.compact:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return json.dumps(body).encode("utf-8")


def wire_headers(route: WireRoute, key: str | None) -> dict[str, str]:
    """The request's headers: JSON, and the key as a bearer token (litellm sends vLLM a
    stand-in, `fake-api-key`, when none is set; so does this)."""
    token = key or (None if route.provider == "openai" else "fake-api-key")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


__all__ = [
    "DIRECT_PROVIDERS",
    "LITELLM_ONLY",
    "OPENAI_PARAMS",
    "WireRoute",
    "direct_route",
    "encode",
    "wire_body",
    "wire_headers",
]
