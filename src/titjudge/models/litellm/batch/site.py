"""Where one model's batch jobs go (`BatchSite`) and what every batch adapter keeps of it
(`SiteAdapter`): the provider is picked from `models.litellm.batch.api.BATCH_ADAPTERS`, a table
as the models are (`models.registry`), and each adapter is built from the one site."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from titjudge.models.core.base import GenerateRequest
from titjudge.models.litellm.raw import BuildsKwargs, built, raw_request


@dataclass(frozen=True)
class BatchSite:
    """One model's batch endpoint: the backend whose online bodies the lines carry, the
    litellm provider, the model id without its provider prefix, the model's `params`, and the
    endpoint, key and timeout its online calls use."""

    backend: BuildsKwargs
    provider: str
    model: str
    api_base: str | None
    api_key: str | None
    timeout: float
    params: Mapping[str, Any] = field(default_factory=dict)


class SiteAdapter:
    """What a batch adapter keeps of its site; a subclass sets `max_requests`, `max_bytes`
    (its provider's documented limits) and `uploads` (whether lines go up as a file)."""

    max_requests: int
    max_bytes: int
    uploads: bool = True

    def __init__(self, site: BatchSite) -> None:
        self._site = site
        self._backend = site.backend
        self._provider = site.provider
        self._model = site.model
        self._api_base = site.api_base
        self._api_key = site.api_key
        self._timeout = site.timeout

    def provider(self) -> str:
        return self._provider

    def body(self, request: GenerateRequest) -> dict[str, Any]:
        """A line's body: litellm's own body for the online call (`models.litellm.raw`)."""
        raw = built(raw_request(self._backend, request))
        return dict(raw.get("raw_request_body") or {})


__all__ = ["BatchSite", "SiteAdapter"]
