"""What a judge needs of the models, declared where judges and config may look: the clients it
calls (`TextCalls`, `EmbeddingCalls`), where it gets them (`ClientSource`) and the mode a call
is made in (`CallMode`).

The call layer fills them in (`models.calls.text_client.ModelClient`,
`models.calls.embedding_client.EmbeddingClient`, `models.calls.probe.CacheProbe`) and the hub
hands them out (`models.hub.ModelHub`); judges and config import only this, so they know
nothing of how a call is cached, limited, retried or sent, nor of any provider.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from titjudge.models.core.base import EmbeddingBackend, GenerateRequest, TextBackend
from titjudge.models.core.options import ModelOptions
from titjudge.records.calls import CallResult, Usage

S = TypeVar("S", bound=BaseModel)


class CallMode(Protocol):
    """How the calls made with it answer (`models.calls.probe.CacheProbe`): from the cache
    alone, a miss sending nothing and claiming nothing. A call made without one answers and
    sends what is missing. Judges only hand it on to their clients' calls."""

    missed: bool
    #: whether a call's images are read and fitted to key it, as its send would
    fits: bool

    def count(
        self, ledger: Usage, results: list[CallResult[Any]], *, model: str = "", role: str = ""
    ) -> None: ...

    def note(self, key: str, request: Any) -> None: ...

    def holds(self, client: Any) -> bool: ...

    def miss(self, client: Any, key: str, compute: Any = None) -> CallResult[Any]: ...

    def on_commit(self, action: Callable[[], Any]) -> None: ...


class TextCalls(Protocol):
    """A text model's calls: free text (descriptions) and replies validated against a schema."""

    @property
    def model(self) -> str: ...

    @property
    def backend(self) -> TextBackend: ...

    async def text(
        self,
        request: GenerateRequest,
        *,
        role: str,
        template: dict[str, str] | None = None,
        accept_truncated: bool = False,
        probe: CallMode | None = None,
    ) -> CallResult[str]: ...

    async def structured(
        self,
        request: GenerateRequest,
        schema: type[S],
        *,
        role: str,
        template: dict[str, str] | None = None,
        probe: CallMode | None = None,
    ) -> CallResult[S]: ...


class EmbeddingCalls(Protocol):
    """An embedding model's calls: one vector per text."""

    @property
    def model(self) -> str: ...

    @property
    def backend(self) -> EmbeddingBackend: ...

    async def embed(
        self, texts: list[str], *, role: str, probe: CallMode | None = None
    ) -> list[CallResult[list[float]]]: ...


class ClientSource(Protocol):
    """Where judges get their clients (the run's `models.hub.ModelHub`): one per model and
    options, shared by every judge that asks for the same."""

    def text_client(self, model: str, options: ModelOptions) -> TextCalls: ...

    def embedding_client(self, model: str, options: ModelOptions) -> EmbeddingCalls: ...


__all__ = ["CallMode", "ClientSource", "EmbeddingCalls", "TextCalls"]
