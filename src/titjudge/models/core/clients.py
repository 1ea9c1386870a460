"""What a judge needs of the models, declared where judges and config may look: the clients it
calls (`TextCalls`, `EmbeddingCalls`), where it gets them (`ClientSource`) and the mode a call
is made in (`CallMode`: `SEND`, or a `Probe`).

The mode is a required keyword argument of every call and of every judge method that makes
one (`probe=`), never a default: sending costs money, so a caller that means it spells
`probe=SEND`, and one that forgets its mode fails type checking and its tests instead of
paying during `titjudge estimate` (tests/test_call_mode.py checks that no function takes
`probe` with a default).

The call layer fills them in (`models.calls.text_client.ModelClient`,
`models.calls.embedding_client.EmbeddingClient`, `models.calls.probe.CacheProbe`) and the hub
hands them out (`models.hub.ModelHub`); judges and config import only this, so they know
nothing of how a call is cached, limited, retried or sent, nor of any provider.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeAlias, TypeVar

from pydantic import BaseModel

from titjudge.models.core.base import EmbeddingBackend, GenerateRequest, TextBackend
from titjudge.models.core.options import ModelOptions
from titjudge.records.calls import CallResult, Usage
from titjudge.records.image_input import ImageInput

S = TypeVar("S", bound=BaseModel)


class Probe(Protocol):
    """How the calls made with it answer (`models.calls.probe.CacheProbe`): from the cache
    alone, a miss sending nothing and claiming nothing (the estimate counts it, the batch
    phase queues it). Judges only hand it on to their clients' calls."""

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


class Send(enum.Enum):
    """The mode of a run's ordinary calls: answered, and what the cache misses is sent (and
    paid for). Its one value, `SEND`, is what a caller spells to mean it."""

    SEND = "send"


#: a run's ordinary calls: answered, a miss sent (`Send`)
SEND: Final = Send.SEND

#: how a call answers: `SEND` (misses are sent), or a `Probe` (from the cache alone)
CallMode: TypeAlias = Probe | Send


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
        probe: CallMode,
    ) -> CallResult[str]: ...

    async def structured(
        self,
        request: GenerateRequest,
        schema: type[S],
        *,
        role: str,
        template: dict[str, str] | None = None,
        probe: CallMode,
    ) -> CallResult[S]: ...


class EmbeddingCalls(Protocol):
    """An embedding model's calls: one vector per text."""

    @property
    def model(self) -> str: ...

    @property
    def backend(self) -> EmbeddingBackend: ...

    async def embed(
        self, texts: list[str], *, role: str, probe: CallMode
    ) -> list[CallResult[list[float]]]: ...

    async def embed_images(
        self, images: list[ImageInput], *, role: str, probe: CallMode
    ) -> list[CallResult[list[float]]]: ...


class ClientSource(Protocol):
    """Where judges get their clients (the run's `models.hub.ModelHub`): one per model and
    options, shared by every judge that asks for the same."""

    def text_client(self, model: str, options: ModelOptions) -> TextCalls: ...

    def embedding_client(self, model: str, options: ModelOptions) -> EmbeddingCalls: ...


__all__ = ["SEND", "CallMode", "ClientSource", "EmbeddingCalls", "Probe", "Send", "TextCalls"]
