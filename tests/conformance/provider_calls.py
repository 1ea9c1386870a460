"""titjudge's own model layer pointed at the provider stand-in (provider_server.py).

The provider tests drive each documented shape through what titjudge really uses, and
assert what titjudge makes of it:

- `generate`: `LiteLLMBackend.generate` (litellm underneath, its retries off) -> the
  `Generation` titjudge reads from the reply (text, finish reason, token counts, logprobs);
- `failure`: the same call failing -> the exception as titjudge classifies it
  (`TransientError` with `retry_after` and `rate_limited`, `PermanentError`,
  `QuotaExhaustedError`);
- `text` / `structured`: the call layer (retries, waits, validation, failure records) ->
  the `CallResult` a run records.

The key reaches the backend as a run passes it: through `api_key_env`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypeVar

import pytest
from provider_server import ProviderServer
from pydantic import BaseModel

from titjudge.cache.store import CallCache
from titjudge.models.calls.text_client import ModelClient
from titjudge.models.core.base import GenerateRequest, Generation
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.models.litellm.backend import LiteLLMBackend
from titjudge.models.litellm.embed import LiteLLMEmbeddingBackend
from titjudge.models.litellm.factory import build
from titjudge.records.calls import CallResult
from titjudge.records.spec import parse_model_spec

S = TypeVar("S", bound=BaseModel)

KEY_ENV = "TITJUDGE_STAND_IN_API_KEY"
KEY = "stand-in-key-0123456789"
HI = GenerateRequest(prompt="hi")


class ModelLayer:
    """Backends and call-layer clients of `litellm:<model>` aimed at the stand-in."""

    def __init__(self, server: ProviderServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
        self.server = server
        self.monkeypatch = monkeypatch
        self.cache = CallCache(tmp_path / "cache")

    def options(self, model: str, key: str, **options: Any) -> ModelOptions:
        self.monkeypatch.setenv(KEY_ENV, key)
        gemini = model.startswith("gemini/")
        options.setdefault(
            "api_base", self.server.gemini_base if gemini else self.server.openai_base
        )
        if "gemini-2.5" in model:
            options.setdefault("thinking", {"budget": 128})  # 2.5 thinks: titjudge wants a budget
        return ModelOptions(api_key_env=KEY_ENV, **options)

    def backend(self, model: str, *, key: str = KEY, **options: Any) -> LiteLLMBackend:
        return build(parse_model_spec(f"litellm:{model}"), self.options(model, key, **options))

    def generate(
        self, model: str, request: GenerateRequest = HI, *, key: str = KEY, **options: Any
    ) -> Generation:
        backend = self.backend(model, key=key, **options)
        return asyncio.run(backend.generate(request))

    def failure(
        self, model: str, request: GenerateRequest = HI, *, key: str = KEY, **options: Any
    ) -> BaseException:
        """The exception the call raised, as titjudge classifies it (the call must fail)."""
        backend = self.backend(model, key=key, **options)
        try:
            asyncio.run(backend.generate(request))
        except Exception as exc:
            return backend.classify_error(exc)
        raise AssertionError("the call succeeded; a failure was expected")

    def client(self, model: str, *, key: str = KEY, **options: Any) -> ModelClient:
        options = {"backoff_initial": 0.01, "backoff_max": 5.0, **options}
        made = self.options(model, key, **options)
        return ModelHub(self.cache).text_client(f"litellm:{model}", made)

    def text(
        self, model: str, request: GenerateRequest = HI, *, key: str = KEY, **options: Any
    ) -> CallResult[str]:
        client = self.client(model, key=key, **options)
        return asyncio.run(client.text(request, role="describer", probe=SEND))

    def structured(
        self,
        model: str,
        schema: type[S],
        request: GenerateRequest = HI,
        *,
        key: str = KEY,
        **options: Any,
    ) -> CallResult[S]:
        client = self.client(model, key=key, **options)
        return asyncio.run(client.structured(request, schema, role="judge", probe=SEND))

    def embedder(self, model: str, *, key: str = KEY, **options: Any) -> LiteLLMEmbeddingBackend:
        made = self.options(model, key, **options)
        return LiteLLMEmbeddingBackend(parse_model_spec(f"litellm:{model}"), made)


__all__ = ["HI", "KEY", "KEY_ENV", "ModelLayer"]
