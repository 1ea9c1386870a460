"""How to reach and drive one model: the typed options every backend and the call layer read.

One set of defaults, here. Config sections (the describer, each judge) extend `ModelOptions`;
`models/` reads these fields directly, never through `getattr` with a default of its own.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from titjudge.models.spec import parse_model_spec
from titjudge.models.thinking import ThinkingError, ThinkingOptions, plan_thinking


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are errors, never silently ignored."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelOptions(StrictModel):
    """How to reach and drive one model. Recorded in the run; the API key itself never is."""

    api_base: str | None = Field(
        None, description="base URL of an OpenAI-compatible or self-hosted server"
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
    concurrency: int | None = Field(None, ge=1, description="max in-flight requests to this model")
    rpm: float | None = Field(None, gt=0, description="max requests per minute to this model")
    tpm: float | None = Field(
        None,
        gt=0,
        description="max tokens per minute to this model (prompt + output; each request is "
        "charged its estimate, corrected by the usage its reply reports)",
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

    def _check_thinking(self, model: str | None) -> None:
        """A thinking setting the model would reject is a config error, not a failed run."""
        if model is None:
            return
        try:
            plan_thinking(parse_model_spec(model), self.thinking, self.api_base)
        except ThinkingError as exc:
            raise ValueError(str(exc)) from None
