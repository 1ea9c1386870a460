"""`litellm:<provider/model>`: any litellm provider (Gemini, OpenAI, vLLM, ...).

litellm's own retries are off (`num_retries=0, max_retries=0`): the call layer retries
with tenacity, only on transient errors (litellm's would also retry 400s). Its disk
cache is not used either (a hit needs fastapi); ours is. Images go as base64 data URIs.
"""

from __future__ import annotations

import contextlib
import copy
import email.utils
import json
import logging
import os
import re
import time
from typing import Any

from titjudge.errors import ConfigError, did_you_mean
from titjudge.models.core.base import (
    GenerateRequest,
    Generation,
    MissingCredentialsError,
    PermanentError,
    QuotaExhaustedError,
    TextBackend,
    TransientError,
    mark_unbilled,
)
from titjudge.models.core.image_limit import ImageLimit
from titjudge.models.core.options import ModelOptions
from titjudge.models.core.spec import ModelSpec
from titjudge.models.litellm.image_limits import image_limit_for
from titjudge.models.litellm.lasting import lasting_reason
from titjudge.models.litellm.messages import build_messages
from titjudge.models.litellm.providers import missing_packages
from titjudge.models.litellm.reasons import content_filter, refused_before_tokens
from titjudge.models.litellm.reply import generation_from
from titjudge.models.litellm.schemas import gemini_schema, inline_ref_siblings, openai_strict_schema
from titjudge.models.litellm.settings import DEFAULT_CONCURRENCY, settings
from titjudge.safety import redact, register_secret

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
    default_concurrency = DEFAULT_CONCURRENCY

    def __init__(self, spec: ModelSpec, options: ModelOptions, *, offline: bool = False):
        """`offline`: build what a request would be without reading a key or checking the
        provider's setup (`titjudge explain`); such a backend sends nothing it is not given a
        key for."""
        super().__init__(spec)
        self.settings = settings(spec, options, read_key=not offline)
        self.api_base = self.settings.api_base
        self.timeout = self.settings.timeout
        self.params = self.settings.params
        self.family = self.settings.family
        self.thinking = self.settings.thinking
        if not offline:
            self._check_setup()
        self._api_key = self.settings.api_key
        register_secret(self._api_key)
        self.capabilities = self.settings.capabilities
        self._schemas: dict[str, tuple[dict[str, Any], bool]] = {}

    def _check_setup(self) -> None:
        """Refuse to build when the provider is unknown or its credentials are absent (the
        variable named by `api_key_env`, else the provider's usual ones, which litellm reads)."""
        check_setup(self.spec, self.api_base, self.settings.api_key_env, self.params)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.settings.facts()}

    def cache_facts(self) -> dict[str, Any]:
        return self.settings.cache_facts()

    def image_limit(self) -> ImageLimit | None:
        return image_limit_for(self.spec.model_id, self.params)

    def thinking_reserve(self) -> int | None:
        return self.thinking.reserve

    def response_format(self, schema: dict[str, Any], name: str) -> dict[str, Any]:
        """The schema in the provider's subset; OpenAI strict mode where the schema allows it."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._schemas:
            subset = self.settings.rules.schema_subset
            if subset == "gemini":
                self._schemas[key] = (gemini_schema(schema), False)
            elif subset == "openai_strict":
                made = openai_strict_schema(schema)
                self._schemas[key] = (made, True) if made else (inline_ref_siblings(schema), False)
            else:
                self._schemas[key] = (inline_ref_siblings(schema), False)
        sent, strict = self._schemas[key]
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": sent, "strict": strict},
        }

    def request_kwargs(self, request: GenerateRequest) -> dict[str, Any]:
        """Everything sent for `request` (the tests read this to see what a provider gets)."""
        kwargs: dict[str, Any] = {
            "model": self.spec.model_id,
            "messages": build_messages(request, single_turn=self.settings.rules.single_turn_reask),
            "max_tokens": request.max_tokens + self.thinking.reserve,
            "timeout": self.timeout,
            "num_retries": 0,
            "max_retries": 0,
        }
        if request.temperature is not None and not (
            # a family that takes only the provider's default (OpenAI reasoning models, Claude
            # while it thinks) gets none; the config resolves such a role's to None, so this
            # only guards callers that build requests themselves
            self.settings.omits_temperature and request.temperature != 1
        ):
            kwargs["temperature"] = request.temperature
        kwargs.update(copy.deepcopy(self.params))
        kwargs.update(self.thinking.kwargs)
        if self.thinking.body:
            kwargs["extra_body"] = _deep_merge(kwargs.get("extra_body") or {}, self.thinking.body)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        if request.json_schema is not None:
            kwargs["response_format"] = self.response_format(
                request.json_schema, request.schema_name or "output"
            )
        if request.top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        if request.sample and request.temperature and "temperature" in kwargs:
            kwargs.setdefault("seed", request.sample)
        return kwargs

    async def generate(self, request: GenerateRequest) -> Generation:
        kwargs = self.request_kwargs(request)
        response = await litellm.acompletion(**kwargs)
        generation = generation_from(response)
        generation.max_tokens_sent = kwargs["max_tokens"]
        return generation

    def classify_error(self, exc: BaseException) -> BaseException:
        return classify_litellm_error(
            exc, self.api_base if isinstance(self.api_base, str) else None
        )

    def batch_api(self) -> Any:
        """The provider's batch API for this model, or None (`models.litellm.batch_api`); one
        per backend, as an adapter keeps what the bodies it built need when sent (Anthropic's
        betas)."""
        from titjudge.models.litellm.batch_api import batch_api_for

        if not hasattr(self, "_batch_api"):
            self._batch_api = batch_api_for(self, self.spec.model_id, self.params, self._api_key)
        return self._batch_api

    def answered_by(self, generation: Generation) -> str | None:
        """What the reply's own model field says (litellm's `response.model`), never the model
        asked for: a provider may answer with another (see `models.calls.provenance`)."""
        return generation.model


def classify_litellm_error(exc: BaseException, where: str | None = None) -> BaseException:
    """A litellm exception as TransientError / PermanentError / QuotaExhaustedError /
    BlockedError (as is when none): the one classification of text and embedding calls. A 429
    is marked `rate_limited`, so the model's limiter pauses and (with no rate set) cuts its
    concurrency. A reason that will not heal within the run (`lasting_reason`) leads the
    message and marks the error `lasting` for the model's breaker (`models.calls.breaker`);
    `where` (the api_base) is named with a connection's reasons. An error the provider
    answered before generating anything (a 4xx/5xx status, a refused connection; not a
    timeout) is marked unbilled: that call cost $0."""
    mapped = _classify(exc, where)
    never_sent = str(getattr(mapped, "lasting", None) or "").startswith(_NEVER_SENT)
    if mapped is not exc and (never_sent or refused_before_tokens(exc)):
        mark_unbilled(mapped)
    return mapped


#: lasting reasons of a request that never reached the provider (`lasting_reason`): $0
_NEVER_SENT = ("missing client package", "TLS handshake failed", "DNS lookup failed")


def _classify(exc: BaseException, where: str | None) -> BaseException:
    message = _message(exc)
    blocked = content_filter(exc, message)
    if blocked is not None:
        return blocked
    quota = quota_exhausted(exc, message)
    if quota is not None:
        return QuotaExhaustedError(f"quota exhausted: {quota}: {message}")
    if isinstance(exc, _PERMANENT) and _GEMINI_RATE_LIMIT.search(_body_text(exc)):
        # litellm maps a Gemini error whose text contains "403" (as in "retry in 14.403s")
        # to a 403 before it looks at the 429: the body's own status decides
        return TransientError(
            f"RateLimitError: {message}", retry_after=retry_after_seconds(exc), rate_limited=True
        )
    lasting = lasting_reason(exc, where)
    if lasting is not None:
        if lasting.startswith(("connection refused", "DNS", "TLS")):  # retried: may be starting
            return TransientError(f"{lasting}: {type(exc).__name__}: {message}", lasting=lasting)
        return PermanentError(f"{lasting}: {type(exc).__name__}: {message}", lasting=lasting)
    if isinstance(exc, _PERMANENT):
        kind = (
            "context length exceeded"
            if isinstance(exc, litellm.ContextWindowExceededError)
            else type(exc).__name__
        )
        return PermanentError(f"{kind}: {message}")
    if "Missing credentials" in message or "api_key client option must be set" in message:
        return PermanentError(f"missing API key: {message}")
    status = getattr(exc, "status_code", None)
    limited = isinstance(exc, litellm.RateLimitError) or status == 429
    if isinstance(exc, _TRANSIENT):
        return TransientError(
            f"{type(exc).__name__}: {message}",
            retry_after=retry_after_seconds(exc),
            rate_limited=limited,
        )
    if isinstance(exc, litellm.APIError) and (
        status is None or int(status) >= 500 or int(status) == 429
    ):
        return TransientError(
            f"{type(exc).__name__}: {message}",
            retry_after=retry_after_seconds(exc),
            rate_limited=limited,
        )
    return _sdk_error(exc, message, status, limited)


def _sdk_error(exc: BaseException, message: str, status: Any, limited: bool) -> BaseException:
    """An error of the OpenAI SDK itself, which litellm's files and batches functions raise
    unmapped: a 408, 409, 429 or 5xx, a lost connection or a timeout may heal; another
    status will not; anything else stays as it is."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
        return TransientError(f"{type(exc).__name__}: {message}")
    if not isinstance(exc, openai.APIStatusError) or not isinstance(status, int):
        return exc
    if status >= 500 or status in (408, 409, 429):
        return TransientError(
            f"{type(exc).__name__}: {message}",
            retry_after=retry_after_seconds(exc),
            rate_limited=limited,
        )
    return PermanentError(f"{type(exc).__name__}: {message}")


def setup_problems(
    spec: ModelSpec,
    api_base: str | list[str] | None,
    api_key_env: str | None,
    params: dict[str, Any] | None = None,
) -> list[str]:
    """What stops `spec` from being called as configured, found without calling it: a provider
    litellm does not know, or credentials absent from the environment (a variable named by
    `api_key_env`, else any of the provider's usual ones; an `api_base` stands in for the
    provider's base-URL variables, and providers that need no key, such as hosted_vllm, need
    none; a list of endpoints serves one model, so its first stands for all). Only variable
    names appear, never a value."""
    unknown, packages, missing = _setup(spec, api_base, api_key_env, params)
    if unknown is not None:
        return [unknown]
    return [
        *([packages] if packages else []),
        *([f"{' or '.join(missing)} not set"] if missing else []),
    ]


def check_setup(
    spec: ModelSpec,
    api_base: str | list[str] | None,
    api_key_env: str | None,
    params: dict[str, Any] | None = None,
) -> None:
    """`setup_problems` as errors, for a backend's build (on the first call that must be sent):
    an unknown provider or a missing client package is a ConfigError; absent credentials a MissingCredentialsError, which
    stops the run (exit 2) rather than failing each call."""
    unknown, packages, missing = _setup(spec, api_base, api_key_env, params)
    if unknown is not None:
        raise ConfigError(f"{spec}: {unknown}")
    if packages:
        raise ConfigError(f"{spec}: {packages}")
    if missing:
        raise MissingCredentialsError(spec, missing)


def _setup(
    spec: ModelSpec,
    api_base: str | list[str] | None,
    api_key_env: str | None,
    params: dict[str, Any] | None,
) -> tuple[str | None, str | None, list[str]]:
    """(why litellm cannot serve `spec`, or None; the client packages it lacks for the
    provider, or None; the credential variables missing)."""
    api_base = api_base[0] if isinstance(api_base, list) else api_base
    custom = (params or {}).get("custom_llm_provider")
    try:
        _, provider, _, _ = litellm.get_llm_provider(
            model=spec.model_id, custom_llm_provider=custom, api_base=api_base
        )
    except Exception:  # litellm raises BadRequestError: "LLM Provider NOT provided"
        return _unknown_provider(spec.model_id), None, []
    packages = missing_packages(provider)
    if api_key_env is not None:
        return None, packages, [] if os.environ.get(api_key_env) else [api_key_env]
    model = f"{provider}/{spec.model_id}" if custom else spec.model_id
    found = litellm.validate_environment(model=model, api_base=api_base)
    missing = [
        k for k in found.get("missing_keys", []) if not (api_base and k.endswith("API_BASE"))
    ]
    if missing and not found.get("keys_in_environment"):
        return None, packages, missing
    return None, packages, []


def _unknown_provider(model_id: str) -> str:
    known = [getattr(p, "value", str(p)) for p in litellm.provider_list]
    provider, slash, _ = model_id.partition("/")
    if not slash:
        return (
            f"litellm cannot tell which provider serves {model_id!r}; write it as "
            "'provider/model', e.g. 'openai/gpt-4o'"
        )
    return f"unknown litellm provider {provider!r}{did_you_mean(provider, known)}"


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _message(exc: BaseException) -> str:
    """The provider's error text, secrets redacted, on one line."""
    text = str(getattr(exc, "message", None) or exc)
    return redact(text).replace("\n", " ")[:500]


def _body_text(exc: BaseException) -> str:
    """Everything the exception carries of the provider's reply body."""
    parts = [str(getattr(exc, "message", None) or ""), str(exc)]
    response = getattr(exc, "response", None)
    if response is not None:
        # a streamed or closed httpx response has no text to give
        with contextlib.suppress(Exception):
            parts.append(str(response.text))
    return "\n".join(parts)


_RETRY_DELAY = re.compile(r"[\"']retryDelay[\"']\s*:\s*[\"'](\d+(?:\.\d+)?)s[\"']")
_GEMINI_RATE_LIMIT = re.compile(r"RESOURCE_EXHAUSTED|[\"']code[\"']\s*:\s*429\b")
_INSUFFICIENT_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota", re.IGNORECASE)
#: Gemini QuotaFailure violations that waiting within a run does not clear
_GEMINI_DEAD_QUOTA = re.compile(r"PerDay|limit:\s*0\b", re.IGNORECASE)


def quota_exhausted(exc: BaseException, message: str | None = None) -> str | None:
    """Why this 429 will not clear by waiting, or None for an ordinary rate limit.

    OpenAI: `insufficient_quota` ("You exceeded your current quota, please check your plan
    and billing details", OpenAI error-codes guide). Gemini: RESOURCE_EXHAUSTED whose
    QuotaFailure names a per-day quota, or a quota whose limit is 0 (the free tier has none
    for the model).
    """
    status = getattr(exc, "status_code", None)
    body = _body_text(exc)
    if not (
        isinstance(exc, litellm.RateLimitError) or status == 429 or "RESOURCE_EXHAUSTED" in body
    ):
        return None
    if "RESOURCE_EXHAUSTED" in body:
        # Gemini says "You exceeded your current quota" for per-minute limits too: only the
        # QuotaFailure's quota id (per day) or a zero limit mark a dead end
        if _GEMINI_DEAD_QUOTA.search(body):
            return "the project's daily or zero quota for this model is spent"
        return None
    if _INSUFFICIENT_QUOTA.search(body):
        return "the account has no quota left (insufficient_quota)"
    return None


def retry_delay_from_body(exc: BaseException) -> float | None:
    """Gemini's 429 puts the wait in the body: google.rpc.RetryInfo `retryDelay: "37s"`."""
    found = _RETRY_DELAY.search(_body_text(exc))
    return float(found.group(1)) if found else None


def retry_after_seconds(exc: BaseException) -> float | None:
    """Retry-After from the provider's response headers (seconds or HTTP date), else the
    RetryInfo `retryDelay` in the body (Gemini), if any."""
    header = _retry_after_header(exc)
    return header if header is not None else retry_delay_from_body(exc)


def _retry_after_header(exc: BaseException) -> float | None:
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
