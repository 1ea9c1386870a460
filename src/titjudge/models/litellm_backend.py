"""`litellm:<provider/model>`: any litellm provider (Gemini, OpenAI, vLLM, ...).

litellm's own retries are off (`num_retries=0, max_retries=0`): the call layer retries
with tenacity, only on transient errors (litellm's would also retry 400s). Its disk
cache is not used either (a hit needs fastapi); ours is. Images go as base64 data URIs.
"""

from __future__ import annotations

import base64
import email.utils
import logging
import os
import time
from typing import Any

from titjudge.errors import ConfigError
from titjudge.models.base import (
    Capabilities,
    GenerateRequest,
    Generation,
    PermanentError,
    TextBackend,
    TokenLogprobs,
    TransientError,
)
from titjudge.models.spec import ModelSpec

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else import fetches prices online
import litellm  # noqa: E402

litellm.suppress_debug_info = True
litellm.telemetry = False
for _name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
    logging.getLogger(_name).setLevel(logging.ERROR)

_TRANSIENT = (
    litellm.RateLimitError,
    litellm.Timeout,
    litellm.APIConnectionError,
    litellm.InternalServerError,
    litellm.ServiceUnavailableError,
    litellm.BadGatewayError,
)
_PERMANENT = (
    litellm.BadRequestError,  # includes ContextWindowExceededError, UnsupportedParamsError
    litellm.AuthenticationError,
    litellm.PermissionDeniedError,
    litellm.NotFoundError,
    litellm.UnprocessableEntityError,
)


class LiteLLMBackend(TextBackend):
    #: no backend-specific cap: `run.concurrency` (or the model's own `concurrency`) governs
    default_concurrency = 1024

    def __init__(self, spec: ModelSpec, options: Any):
        super().__init__(spec)
        self.api_base: str | None = getattr(options, "api_base", None)
        self.api_key_env: str | None = getattr(options, "api_key_env", None)
        self.timeout: float = float(getattr(options, "timeout", 120.0))
        self.params: dict[str, Any] = dict(getattr(options, "params", {}) or {})
        self.json_mode: bool = bool(self.params.pop("json_schema_mode", True))
        self._api_key = self._read_key()
        self.capabilities = Capabilities(vision=True, json_schema=self.json_mode, logprobs=True)

    def _read_key(self) -> str | None:
        if self.api_key_env is None:
            self._check_environment()
            return None  # litellm reads the provider's usual variable (OPENAI_API_KEY, GEMINI_API_KEY, ...)
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(
                f"{self.spec}: api_key_env names {self.api_key_env!r}, but that environment variable is not set"
            )
        return key

    def _check_environment(self) -> None:
        """Fail before the run, not on every item, when the provider's credentials are absent."""
        try:
            found = litellm.validate_environment(model=self.spec.model_id, api_base=self.api_base)
        except Exception:  # unknown provider: litellm itself will say what is wrong at call time
            return
        missing = [
            k
            for k in found.get("missing_keys", [])
            if not (self.api_base and k.endswith("API_BASE"))
        ]
        if missing and not found.get("keys_in_environment"):
            raise ConfigError(
                f"{self.spec}: no credentials in the environment (litellm looks for {' or '.join(missing)}); "
                "set one, or name the variable holding the key with api_key_env"
            )

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "api_base": self.api_base,
            "api_key_env": self.api_key_env,
            "params": self.params,
            "litellm_version": _litellm_version(),
        }

    async def generate(self, request: GenerateRequest) -> Generation:
        kwargs: dict[str, Any] = {
            "model": self.spec.model_id,
            "messages": build_messages(request),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "timeout": self.timeout,
            "num_retries": 0,
            "max_retries": 0,
            **self.params,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        if request.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name or "output",
                    "schema": request.json_schema,
                    "strict": False,
                },
            }
        if request.top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        if request.sample and request.temperature > 0:
            kwargs.setdefault("seed", request.sample)
        response = await litellm.acompletion(**kwargs)
        return _generation_from(response)

    def classify_error(self, exc: BaseException) -> BaseException:
        message = _message(exc)
        if isinstance(exc, _PERMANENT):
            kind = (
                "context length exceeded"
                if isinstance(exc, litellm.ContextWindowExceededError)
                else type(exc).__name__
            )
            return PermanentError(f"{kind}: {message}")
        if "Missing credentials" in message or "api_key client option must be set" in message:
            return PermanentError(f"missing API key: {message}")
        if isinstance(exc, _TRANSIENT):
            return TransientError(
                f"{type(exc).__name__}: {message}", retry_after=retry_after_seconds(exc)
            )
        status = getattr(exc, "status_code", None)
        if isinstance(exc, litellm.APIError) and (
            status is None or int(status) >= 500 or int(status) == 429
        ):
            return TransientError(
                f"{type(exc).__name__}: {message}", retry_after=retry_after_seconds(exc)
            )
        return exc


def build_messages(request: GenerateRequest) -> list[dict[str, Any]]:
    """OpenAI-style messages; images are attached to the first user turn."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    turns = [*request.history, ("user", request.prompt)]
    attached = False
    for role, text in turns:
        if role == "user" and not attached and request.images:
            parts: list[dict[str, Any]] = [
                {"type": "image_url", "image_url": {"url": _data_uri(image.data, image.mime)}}
                for image in request.images
            ]
            parts.append({"type": "text", "text": text})
            messages.append({"role": "user", "content": parts})
            attached = True
        else:
            messages.append({"role": role, "content": text})
    return messages


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _generation_from(response: Any) -> Generation:
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    # litellm prices every reply it can while building the response; asking again costs
    # ~1 ms of CPU per call (and an exception for unpriced models): read its answer instead.
    hidden = getattr(response, "_hidden_params", None) or {}
    raw_cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    cost = float(raw_cost) if raw_cost is not None else None
    return Generation(
        text=choice.message.content or "",
        tokens_in=getattr(usage, "prompt_tokens", None),
        tokens_out=getattr(usage, "completion_tokens", None),
        cost=cost,
        finish_reason=getattr(choice, "finish_reason", None),
        logprobs=_logprobs(getattr(choice, "logprobs", None)),
    )


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


def _message(exc: BaseException) -> str:
    text = str(getattr(exc, "message", None) or exc)
    return text.replace("\n", " ")[:500]


def retry_after_seconds(exc: BaseException) -> float | None:
    """Retry-After from the provider's response headers (seconds or HTTP date), if any."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    response = getattr(exc, "response", None)
    if not headers and response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = None
    for name in ("retry-after", "Retry-After", "retry-after-ms"):
        try:
            value = headers.get(name)
        except AttributeError:
            return None
        if value is not None:
            if name == "retry-after-ms":
                return float(value) / 1000.0
            break
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(str(value))
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _litellm_version() -> str:
    from importlib.metadata import version

    return version("litellm")


def build(spec: ModelSpec, options: Any) -> LiteLLMBackend:
    return LiteLLMBackend(spec, options)
