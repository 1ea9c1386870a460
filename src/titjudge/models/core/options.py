"""How to reach and drive one model: the typed options every backend and the call layer read.

One set of defaults, here. Config sections (the describer, each judge) extend `ModelOptions`;
`models/` reads these fields directly, never through `getattr` with a default of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from titjudge.errors import SettingRefused
from titjudge.models.core.thinking import ThinkingOptions, plan_thinking
from titjudge.records.spec import parse_model_spec

#: `run.require_model`: "report" records the model each reply says answered; "exact" makes a
#: reply from another model a failure record (`models.calls.provenance`)
RequireModel = Literal["report", "exact"]
#: `run.stop_after`'s default: above one (a lone refusal may be a fluke) yet far below a
#: run's size; at concurrency 32 the first wave of a dead endpoint already trips it
#: (`models.calls.breaker`)
DEFAULT_STOP_AFTER = 5
#: a model's `structured_output`: how a judge's JSON schema goes with its requests
#: (`models.litellm.dialects`); `auto` learns it from the endpoint
StructuredOutput = Literal[
    "auto",
    "json_schema",
    "json_object",
    "json_value",
    "structured_outputs",
    "guided_json",
    "prompt",
]

#: a `litellm:` model's `transport`: how its requests reach the provider. `direct`: titjudge
#: posts litellm's request itself on a pooled aiohttp session (OpenAI-compatible endpoints:
#: `openai/...`, `hosted_vllm/...`; `models.litellm.wire`); `litellm`: through
#: `litellm.acompletion`; `auto`: direct where the model's provider and params allow it
Transport = Literal["auto", "direct", "litellm"]
#: the options one model's calls share whichever role makes them (see `option_conflicts`):
#: its one limiter (concurrency, rpm, tpm), its calls' timeout and retries, a local model's
#: batch size, and its price (one model is billed at one rate, whichever role calls it)
MODEL_WIDE = (
    "timeout",
    "max_attempts",
    "backoff_initial",
    "backoff_max",
    "concurrency",
    "rpm",
    "tpm",
    "batch_size",
    "price",
    "batch",
    "batch_poll",
    "transport",
)


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are errors, never silently ignored."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Price(StrictModel):
    """A model's price in $ per 1M tokens, for a model litellm does not price (a self-hosted
    server may say 0); thinking tokens are billed as output."""

    input: float = Field(ge=0, description="$ per 1M input tokens")
    output: float = Field(ge=0, description="$ per 1M output (and thinking) tokens")
    cached_input: float | None = Field(
        None,
        ge=0,
        description="$ per 1M input tokens served from the provider's prompt cache "
        "(default: the input price)",
    )


class ModelOptions(StrictModel):
    """How to reach and drive one model. Recorded in the run; the API key itself never is."""

    # an error's text never repeats the value it refuses (an api_base with a password in it)
    model_config = ConfigDict(hide_input_in_errors=True)

    api_base: str | list[str] | None = Field(
        None,
        description="base URL of an OpenAI-compatible or self-hosted server, or a list of URLs: "
        "replicas of one model, calls spread over them (see docs/providers.md 'Several endpoints')",
    )
    api_key_env: str | None = Field(
        None, description="name of the environment variable holding the API key"
    )
    timeout: float = Field(120.0, gt=0, description="seconds per request")
    max_attempts: int = Field(6, ge=1, le=50, description="attempts per call, counting the first")
    backoff_initial: float = Field(
        1.0, ge=0, description="first retry wait in seconds (doubles, with jitter)"
    )
    backoff_max: float = Field(60.0, ge=0, description="longest retry wait, also caps Retry-After")
    concurrency: int | None = Field(
        None, ge=1, description="max in-flight requests to this model (per endpoint of a list)"
    )
    rpm: float | None = Field(
        None, gt=0, description="max requests per minute to this model (per endpoint of a list)"
    )
    tpm: float | None = Field(
        None,
        gt=0,
        description="max tokens per minute to this model (prompt + output; each request is "
        "charged its estimate, corrected by the usage its reply reports; per endpoint of a list)",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="extra provider parameters, passed through"
    )
    structured_output: StructuredOutput | None = Field(
        None,
        description="how a judge's JSON schema is sent: json_schema (OpenAI's response_format), "
        "json_object (with a schema: llama-cpp-python), json_value (the schema under value: "
        "TGI), structured_outputs or guided_json "
        "(vLLM's extra body), prompt (none sent; the reply is validated), or auto (learned "
        "from the endpoint; the default at a custom api_base); see docs/providers.md 'Structured outputs'",
    )
    device: str | None = Field(
        None, description="local models: 'auto', 'cpu', 'cuda', 'cuda:1', ..."
    )
    dtype: str | None = Field(
        None, description="local models: 'auto', 'bfloat16', 'float16', 'float32'"
    )
    batch_size: int | None = Field(None, ge=1, description="local models: items per forward pass")
    thinking: ThinkingOptions | None = Field(
        None,
        description="thinking/reasoning: {budget: N} tokens on top of max_tokens, an effort or "
        "level (minimal, low, medium, high), or off; see docs/configuration.md 'Thinking'",
    )
    max_image_pixels: int | None = Field(
        None,
        ge=28 * 28,
        description="downscale images above this many pixels before sending (keeps the aspect "
        "ratio); the resized image is what the cache keys on",
    )

    price: Price | None = Field(
        None,
        description="{input: $, output: $} per 1M tokens, for a model litellm does not price; "
        "used by `titjudge estimate` and the run's cost (see docs/cost-and-batch.md)",
    )

    batch: bool = Field(
        False,
        description="send this model's calls as the provider's batch jobs (about half price, "
        "answers within 24 h): litellm:openai/... and azure/... models; see docs/cost-and-batch.md 'Batch'",
    )
    batch_poll: float = Field(
        30.0, gt=0, description="seconds between two looks at this model's batch jobs"
    )
    transport: Transport = Field(
        "auto",
        description="litellm: models: 'direct' (titjudge posts the request itself to an "
        "OpenAI-compatible endpoint: openai/..., hosted_vllm/...), 'litellm' (through "
        "litellm.acompletion) or 'auto' (direct where the provider and params allow it); "
        "see docs/providers.md 'Transport'",
    )

    @field_validator("api_base")
    @classmethod
    def _endpoints(cls, value: str | list[str] | None) -> str | list[str] | None:
        """One URL or a list of replicas: at least one, each an http(s) URL with a host and no
        credentials in it, none twice; a list of one is that URL."""
        if value is None:
            return value
        urls = [value] if isinstance(value, str) else value
        if not urls:
            raise ValueError("api_base is an empty list; give one URL or a list of URLs")
        seen: set[str] = set()
        for url in urls:
            check_url(url)
            if url.rstrip("/") in seen:
                raise ValueError(f"api_base lists {url!r} twice")
            seen.add(url.rstrip("/"))
        return urls[0] if len(urls) == 1 else urls

    @property
    def endpoints(self) -> list[str]:
        """The URLs of `api_base` as a list (empty when there is none)."""
        if self.api_base is None:
            return []
        return [self.api_base] if isinstance(self.api_base, str) else list(self.api_base)

    def _check_batch(self, model: str | None) -> None:
        """`batch: true` only on a `litellm:` model whose provider has a batch API titjudge
        drives, at one endpoint: anything else is a config error naming those providers."""
        if not self.batch or model is None:
            return
        from titjudge.models.core.batch import BATCH_PROVIDERS

        spec = parse_model_spec(model)
        provider = serving_provider(model, self.params)
        have = ", ".join(f"litellm:{p}/..." for p in BATCH_PROVIDERS)
        if spec.backend != "litellm" or provider not in BATCH_PROVIDERS:
            served = f"provider {provider!r}" if spec.backend == "litellm" else spec.backend
            raise SettingRefused(
                f"batch: true needs a provider with a batch API; {model} is served by "
                f"{served}, which has none titjudge drives. Batch works with {have}",
                "batch",
                fix="false",
            )
        if isinstance(self.api_base, list):
            raise ValueError(f"batch: true takes one api_base, not a list ({model})")
        if provider == "vertex_ai" and not self.params.get("gcs_bucket_name"):
            raise ValueError(
                f"batch: true on Vertex AI needs a Cloud Storage bucket for the jobs' files: "
                f"set params.gcs_bucket_name ({model})"
            )

    def _check_structured(self, model: str | None) -> None:
        """`structured_output` names how a server takes a schema: only a `litellm:` model
        sends one; `params.json_schema_mode: false` (the older spelling of `prompt`) may not
        contradict it."""
        if self.structured_output is None or model is None:
            return
        spec = parse_model_spec(model)
        if spec.backend == "hf" and self.structured_output in ("auto", "prompt"):
            return  # prompt: no grammar at decoding (`models.local.hf_schema`)
        if spec.backend != "litellm":
            raise ValueError(
                f"structured_output applies to litellm: models (a server's dialect), not "
                f"{spec.backend}: ({model}); an hf: model takes only prompt (decode without "
                "the schema's grammar)"
            )
        legacy = self.params.get("json_schema_mode")
        if legacy is not None and not legacy and self.structured_output != "prompt":
            raise ValueError(
                f"params.json_schema_mode: false sends no schema, but structured_output is "
                f"{self.structured_output!r}; keep one of them ({model})"
            )

    def _check_thinking(self, model: str | None) -> None:
        """A thinking setting the model would reject is a config error, not a failed run.
        `litellm:` models are checked by their family's rules with the role's sampling
        (`models.litellm.sampling.role_temperature`, called by the config sections)."""
        if model is None:
            return
        spec = parse_model_spec(model)
        if spec.backend == "litellm":
            return
        plan_thinking(spec, self.thinking, self.api_base)  # ThinkingError: a ValueError


def serving_provider(model: str, params: dict[str, Any]) -> str:
    """Who serves `model`: a `litellm:` model's provider (`params.custom_llm_provider`, else its
    prefix: `openai` of `openai/gpt-4o`; a bare name is its own), another backend's name."""
    spec = parse_model_spec(model)
    if spec.backend != "litellm":
        return f"{spec.backend}:"
    custom = params.get("custom_llm_provider")
    return str(custom) if custom else spec.model_id.partition("/")[0]


def check_url(url: str) -> None:
    """An `api_base` URL: http or https, a host, and no user or password in it (the key goes in
    the environment variable `api_key_env` names; a URL is written to config.yaml and logs).
    The error never repeats a credential."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        credentials = parts.username is not None or parts.password is not None
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        raise ValueError(f"api_base {shown_url(url)!r} is not an http(s) URL") from None
    if credentials:
        raise ValueError(
            f"api_base {shown_url(url)!r} has credentials in it, which would be written to "
            "config.yaml and logs; put the key in an environment variable and name it with "
            "api_key_env"
        )
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(
            f"api_base {url!r} is not an http(s) URL with a host (e.g. http://127.0.0.1:8000/v1)"
        )


def shown_url(url: str) -> str:
    """`url` with anything before an '@' in its authority replaced by '***'."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    return f"{scheme}{sep}{authority}{slash}{path}"


def limit_key(model: str, options: ModelOptions) -> tuple[str, tuple[str, ...]]:
    """Who shares one model's limits: every client of its spec at the same endpoints, whatever
    else differs (image limits, params, thinking)."""
    return str(parse_model_spec(model)), tuple(url.rstrip("/") for url in options.endpoints)


def option_conflicts(uses: Iterable[tuple[str, str, ModelOptions]]) -> list[str]:
    """For (user, model, options) uses: one line per model whose users set a `MODEL_WIDE`
    option differently, naming the users and their values, e.g. `describer and judge j call
    litellm:openai/x with different timeout (120 and 0.5)`. Values are compared as used,
    defaults included: the model's one client runs with one of them."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[str, ModelOptions]]] = {}
    for user, model, options in uses:
        groups.setdefault(limit_key(model, options), []).append((user, options))
    lines = []
    for (model, _), members in groups.items():
        first_user, first = members[0]
        for user, options in members[1:]:
            differ = [
                f"{name} ({_value(getattr(first, name))} and {_value(getattr(options, name))})"
                for name in MODEL_WIDE
                if getattr(first, name) != getattr(options, name)
            ]
            if differ:
                lines.append(
                    f"{first_user} and {user} call {model} with different {', '.join(differ)}: "
                    "one model's calls share one client and one rate limit, so set "
                    f"{'it' if len(differ) == 1 else 'them'} the same in both"
                )
                break
    return lines


def _value(value: object) -> str:
    return "unset" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
