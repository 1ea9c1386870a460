"""The backend interface: one abstract method per capability, hooks with defaults.

A backend turns a `GenerateRequest` into a `Generation` (or texts into vectors). It
does not cache, retry, rate-limit or validate: the call layer (`models.call`) does
that once for every backend. A backend only says which of its errors are transient.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import mimetypes
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.errors import ConfigError
from titjudge.models.spec import ModelSpec


class ImageInput:
    """Image bytes plus what is needed to send them; the cache keys on the content hash.

    A deferred image (`deferred`) knows its hash, type and pixel size, read from an earlier
    load of the same unchanged file, but not its bytes: a call answered from the cache never
    needs them, and `load()` reads them when one must really be sent. Its `data` is an error
    until then. A loaded image's `size` is read from its header when first asked for.
    """

    __slots__ = ("_data", "_fetch", "_loading", "_sha256", "_size", "mime", "path")

    def __init__(
        self,
        data: bytes,
        mime: str = "image/png",
        path: Path | None = None,
        *,
        size: tuple[int, int] | None = None,
    ):
        self._data: bytes | None = data
        self.mime = mime
        self.path = path
        self._sha256: str | None = None
        self._size = size
        self._fetch: Callable[[], Awaitable[ImageInput]] | None = None
        self._loading: asyncio.Future[None] | None = None

    @classmethod
    def deferred(
        cls,
        sha256: str,
        mime: str,
        path: Path | None,
        size: tuple[int, int],
        fetch: Callable[[], Awaitable[ImageInput]],
    ) -> ImageInput:
        """An image known by its hash, type and size, whose bytes `fetch` reads (and checks
        against `sha256`) on the first `load()`."""
        image = cls(b"", mime, path, size=size)
        image._data, image._sha256, image._fetch = None, sha256, fetch
        return image

    @classmethod
    def from_path(cls, path: str | Path) -> ImageInput:
        path = Path(path)
        mime = mimetypes.guess_type(path.name)[0] or "image/png"
        return cls(data=path.read_bytes(), mime=mime, path=path)

    @property
    def loaded(self) -> bool:
        return self._data is not None

    @property
    def data(self) -> bytes:
        if self._data is None:
            raise RuntimeError(f"image {self.path or self.sha256[:12]} was sent before load()")
        return self._data

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            self._sha256 = hashlib.sha256(self.data).hexdigest()
        return self._sha256

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        if self._size is None:
            from PIL import Image

            with Image.open(io.BytesIO(self.data)) as opened:  # reads the header only
                self._size = opened.size
        return self._size

    async def load(self) -> ImageInput:
        """This image with its bytes: itself once they are read (a deferred image reads them
        once, then keeps them)."""
        if self._data is not None:
            return self
        if self._loading is not None:  # another call is reading it: one read for both
            await asyncio.shield(self._loading)
            return self
        assert self._fetch is not None
        self._loading = asyncio.get_running_loop().create_future()
        try:
            read = await self._fetch()
            self._data, self._size = read.data, read.size
            self._loading.set_result(None)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                self._loading.cancel()
            else:
                self._loading.set_exception(exc)
                self._loading.exception()  # the waiters re-raise it; none needed
            self._loading = None  # a later call may try again
            raise
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImageInput):
            return NotImplemented
        return (self.sha256, self.mime, self.path) == (other.sha256, other.mime, other.path)

    def __hash__(self) -> int:
        return hash((self.sha256, self.mime, self.path))

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "deferred"
        return f"ImageInput({self.mime}, {self.path}, sha256={self.sha256[:12]}, {state})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to a Ray actor) with its bytes; a deferred image must be loaded first."""
        return (_rebuilt, (self.data, self.mime, self.path, self._size))


def _rebuilt(data: bytes, mime: str, path: Path | None, size: tuple[int, int] | None) -> ImageInput:
    return ImageInput(data, mime, path, size=size)


@dataclass(frozen=True)
class GenerateRequest:
    """Everything that determines a model's output (and so its cache key).

    `images` are shown before `prompt` in one user turn. `json_schema`, when set, asks
    the backend for JSON of that shape using the provider's structured-output mode
    where one exists; the call layer validates the text either way.
    """

    prompt: str
    system: str | None = None
    images: tuple[ImageInput, ...] = ()
    max_tokens: int = 512
    temperature: float = 0.0
    json_schema: dict[str, Any] | None = None
    schema_name: str | None = None
    #: earlier turns (role, content) for a re-ask after invalid output
    history: tuple[tuple[str, str], ...] = ()
    #: return the top-k log-probabilities per generated token (0 = none)
    top_logprobs: int = 0
    #: repeat index: distinct samples of the same request get distinct cache keys
    sample: int = 0


@dataclass
class TokenLogprobs:
    """Log-probabilities at one generated position: the sampled token and the top-k."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass
class Generation:
    """What a backend returns for one request."""

    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    finish_reason: str | None = None
    logprobs: list[TokenLogprobs] | None = None
    #: of tokens_out, how many were thinking/reasoning (billed as output, not the answer)
    thinking_tokens: int | None = None
    #: the output cap the request carried (answer budget plus any thinking reserve)
    max_tokens_sent: int | None = None
    #: the model the provider's reply says answered (OpenAI-compatible `model`, Gemini
    #: `modelVersion`); None when the reply does not say (see `Backend.answered_by`)
    model: str | None = None


@dataclass(frozen=True)
class Capabilities:
    vision: bool = False
    json_schema: bool = False
    logprobs: bool = False


class TransientError(Exception):
    """Raised by a backend for an error worth retrying (rate limit, 5xx, timeout, connection).

    `rate_limited` marks the provider's 429 (a rate limit, not a failure): the call layer then
    pauses the whole model for `retry_after` and, where no rate is configured, sends fewer
    requests at once."""

    def __init__(
        self, message: str, retry_after: float | None = None, *, rate_limited: bool = False
    ):
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited


class PermanentError(Exception):
    """Raised by a backend for an error that retrying cannot fix (bad request, auth, context)."""


class InputRejectedError(PermanentError):
    """The provider refused a request for what it carries (a 400 or 422: a text over the
    model's context length, an input it cannot take), not for who sent it or where (key,
    model, quota, parameters). Retrying the same request cannot help, but the texts beside
    the one at fault are not to blame: an embedding request of several texts that meets this
    is split until the text at fault is alone (`models.embedding_client`)."""


class QuotaExhaustedError(PermanentError):
    """The account's quota for this model is spent (OpenAI `insufficient_quota`, a Gemini daily
    or zero quota): waiting will not clear it, so the call layer sends this model nothing more
    for the rest of the run."""


class MissingCredentialsError(ConfigError):
    """A call missed the cache and must be sent, but the key it needs is not in the
    environment. Unlike a model failure, this is no failure record: the whole run stops (one
    line, exit 2), keeping every answer already stored; set the variable and run again.
    Credentials are checked only here, when a call must really be sent, so a fully cached
    re-run needs no key (the preflight checks them up front only for models with no answers)."""

    def __init__(self, spec: ModelSpec | str, variables: list[str]):
        self.variables = list(variables)
        one = len(self.variables) == 1
        names = ", ".join(self.variables)
        missing = f"{names} is not set" if one else f"none of {names} is set"
        super().__init__(
            f"{spec}: a call is not in the cache and must be sent, but {missing}; every answer "
            f"already computed is kept in the cache: set {'it' if one else 'one'} and run again"
        )


class Backend:
    """Common part of every backend (not abstract itself: see TextBackend, EmbeddingBackend)."""

    #: default max in-flight requests when config gives none
    default_concurrency: int = 16
    #: False for backends whose answers cost nothing to recompute (replay)
    cacheable: bool = True

    def __init__(self, spec: ModelSpec):
        self.spec = spec

    def describe(self) -> dict[str, Any]:
        """Facts recorded in the run's resolved config (never secrets)."""
        return {"backend": self.spec.backend, "model_id": self.spec.model_id}

    def classify_error(self, exc: BaseException) -> BaseException:
        """Map a library exception to TransientError / PermanentError; default: as is."""
        return exc

    def answered_by(self, generation: Generation) -> str | None:
        """The model that gave `generation`: a local model (`hf:`, `replay:`) answers as
        itself; a served one (`litellm:`) says who answered in its reply, which may not be
        the model asked for (a retired model re-routed, an alias moved): None when it did not
        say."""
        return self.spec.model_id

    def cache_facts(self) -> dict[str, Any]:
        """What this backend adds to every request that changes the output, beyond the request
        and `params` (e.g. the thinking switch it sends): part of every cache key when set."""
        return {}

    async def ready(self) -> None:
        """Load whatever a call needs (a lazy backend builds itself here); called before a
        call takes its limiter slot, so loading never counts against the call's timeout."""

    async def aclose(self) -> None:
        """Release resources (HTTP sessions, GPU memory)."""


class TextBackend(Backend, ABC):
    """A model that writes text: VLMs (with images) and LLMs (text only)."""

    capabilities: Capabilities = Capabilities()

    @abstractmethod
    async def generate(self, request: GenerateRequest) -> Generation:
        """Run one request. Concurrent calls are allowed; local backends batch them."""


class EmbeddingBackend(Backend, ABC):
    """A model that maps texts to unit vectors."""

    #: the most texts one `embed` call may carry (a provider's batch limit); None: any number
    max_batch: int | None = None

    @abstractmethod
    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed texts (already instruction-formatted by the caller); L2-normalised rows."""

    async def embed_each(self, texts: list[str]) -> list[list[float] | BaseException]:
        """One vector per text, or the error of that text alone, in order. A backend that can
        tell one text's failure from the others' (a local model) overrides this; here an
        error raised by `embed` is the whole request's."""
        return list(await self.embed(texts))
