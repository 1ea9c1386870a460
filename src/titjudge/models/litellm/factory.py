"""The registry's entry point for `litellm:` text models: one endpoint is a `LiteLLMBackend`,
a list of endpoints (`api_base: [url, ...]`) a litellm Router over them (`RouterBackend`,
imported only then: it imports litellm, which a model sent direct never needs)."""

from __future__ import annotations

from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.backend import LiteLLMBackend
from titjudge.records.spec import ModelSpec


def build(spec: ModelSpec, options: ModelOptions) -> LiteLLMBackend:
    """The backend for `spec`: a Router when `api_base` lists several endpoints."""
    if isinstance(options.api_base, list):
        from titjudge.models.litellm.router import RouterBackend

        return RouterBackend(spec, options)
    return LiteLLMBackend(spec, options)
