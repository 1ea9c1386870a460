"""How to reach and drive one model: the typed options every backend and the call layer read.

One set of defaults, here. Config sections (the describer, each judge) extend `ModelOptions`;
`models/` reads these fields directly, never through `getattr` with a default of its own.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from titjudge.models.core.spec import parse_model_spec
from titjudge.models.core.thinking import ThinkingError, ThinkingOptions, plan_thinking


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

    api_base: str | list[str] | None = Field(
        None,
        description="base URL of an OpenAI-compatible or self-hosted server, or a list of URLs: "
        "replicas of one model, calls spread over them (see README 'Several endpoints')",
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
    device: str | None = Field(
        None, description="local models: 'auto', 'cpu', 'cuda', 'cuda:1', ..."
    )
    dtype: str | None = Field(
        None, description="local models: 'auto', 'bfloat16', 'float16', 'float32'"
    )
    batch_size: int | None = Field(None, ge=1, description="local models: items per forward pass")
    thinking: ThinkingOptions | None = Field(
        None,
        description="thinking/reasoning: {budget: N} tokens on top of max_tokens, {effort: low}, "
        "or off; see README 'Thinking'",
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
        "used by `titjudge estimate` and the run's cost (see README 'Cost')",
    )

    @field_validator("api_base")
    @classmethod
    def _endpoints(cls, value: str | list[str] | None) -> str | list[str] | None:
        """A list names replicas: at least one, each an http(s) URL, none twice; a list of one
        is that URL."""
        if not isinstance(value, list):
            return value
        if not value:
            raise ValueError("api_base is an empty list; give one URL or a list of URLs")
        seen: set[str] = set()
        for url in value:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"api_base {url!r} is not an http(s) URL")
            if url.rstrip("/") in seen:
                raise ValueError(f"api_base lists {url!r} twice")
            seen.add(url.rstrip("/"))
        return value[0] if len(value) == 1 else value

    @property
    def endpoints(self) -> list[str]:
        """The URLs of `api_base` as a list (empty when there is none)."""
        if self.api_base is None:
            return []
        return [self.api_base] if isinstance(self.api_base, str) else list(self.api_base)

    def _check_thinking(self, model: str | None) -> None:
        """A thinking setting the model would reject is a config error, not a failed run."""
        if model is None:
            return
        try:
            plan_thinking(parse_model_spec(model), self.thinking, self.api_base)
        except ThinkingError as exc:
            raise ValueError(str(exc)) from None
