"""The backend interface: one abstract method per capability, hooks with defaults.

A backend turns a `GenerateRequest` into a `Generation` (or texts into vectors). It
does not cache, retry, rate-limit or validate: the call layer (`models.calls.text_client`) does
that once for every backend. A backend only says which of its errors are transient.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from titjudge.errors import ConfigError
from titjudge.models.core.image_limit import ImageLimit
from titjudge.records.calls import TokenLogprobs
from titjudge.records.image_input import ImageInput
from titjudge.records.spec import ModelSpec

E = TypeVar("E", bound=BaseException)


#: what a call is made for: one item (its description, a per-item judge's score) or one pair
#: (a pairwise judge's verdict); `models.calls.budget` counts the calls it refuses by it
MadeFor = Literal["item", "pair"]


@dataclass(frozen=True)
class GenerateRequest:
    """Everything that determines a model's output (and so its cache key), and what the call
    is made for (`made_for`, which no key reads: the budget counts the calls it refuses by it).

    `images` are shown before `prompt` in one user turn. `json_schema`, when set, asks
    the backend for JSON of that shape using the provider's structured-output mode
    where one exists; the call layer validates the text either way.
    """

    prompt: str
    system: str | None = None
    images: tuple[ImageInput, ...] = ()
    max_tokens: int = 512
    #: None: the provider's default, nothing sent (families that refuse or advise against a
    #: setting: `models.litellm.sampling`)
    temperature: float | None = 0.0
    json_schema: dict[str, Any] | None = None
    schema_name: str | None = None
    #: earlier turns (role, content) for a re-ask after invalid output
    history: tuple[tuple[str, str], ...] = ()
    #: return the top-k log-probabilities per generated token (0 = none)
    top_logprobs: int = 0
    #: repeat index: distinct samples of the same request get distinct cache keys
    sample: int = 0
    #: an item's call (its description, a per-item judge's score) or a pairwise verdict's:
    #: not part of the output, so in no key; `run.budget_usd` counts its refusals by it
    made_for: MadeFor = "item"


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
    #: of tokens_in, prompt tokens the provider served from its prompt cache (billed at its
    #: cached-input rate; OpenAI `prompt_tokens_details.cached_tokens`, which litellm also fills
    #: from Gemini's `cachedContentTokenCount` and Anthropic's `cache_read_input_tokens`)
    cached_tokens: int | None = None
    #: the output cap the request carried (answer budget plus any thinking reserve)
    max_tokens_sent: int | None = None
    #: the model the provider's reply says answered (OpenAI-compatible `model`, Gemini
    #: `modelVersion`); None when the reply does not say (see `Backend.answered_by`)
    model: str | None = None
    #: the model's own refusal text (OpenAI structured outputs: `message.refusal`, with no
    #: content); None when it did not refuse
    refusal: str | None = None
    #: text the server returned as reasoning apart from the answer (vLLM with a reasoning
    #: parser: `reasoning_content` / `reasoning`); kept only to name an empty answer's cause
    reasoning: str | None = None


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
        self,
        message: str,
        retry_after: float | None = None,
        *,
        rate_limited: bool = False,
        lasting: str | None = None,
    ):
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        #: see `PermanentError.lasting`: a refused connection, a failed DNS lookup or TLS
        #: handshake is retried like any transient error, but counts towards the breaker
        self.lasting = lasting


class PermanentError(Exception):
    """Raised by a backend for an error that retrying cannot fix (bad request, auth, context).

    `lasting` names, in a few words, a reason that will not heal within the run and is the
    endpoint's, not the request's (`401 unauthorized`, `404 model not found`, `missing client
    package google.auth`, `quota exhausted`): the call layer's circuit breaker
    (`models.calls.breaker`) stops a model after `run.stop_after` requests in a row failed so."""

    def __init__(self, message: str, *, lasting: str | None = None):
        super().__init__(message)
        self.lasting = lasting


class InputRejectedError(PermanentError):
    """The provider refused a request for what it carries (a 400 or 422: a text over the
    model's context length, an input it cannot take), not for who sent it or where (key,
    model, quota, parameters). Retrying the same request cannot help, but the texts beside
    the one at fault are not to blame: an embedding request of several texts that meets this
    is split until the text at fault is alone (`models.calls.embedding_client`)."""


class BlockedError(PermanentError):
    """The provider refused the request for its content before answering (an Azure OpenAI
    content filter on the prompt: HTTP 400, code `content_filter`): a failure counted as
    blocked, like a reply withheld for its content."""


def mark_unbilled(exc: E) -> E:
    """Mark `exc` as a refusal before any token was generated (an error status from the
    provider, a connection never made): the call cost $0, not an unknown price."""
    exc.unbilled = True  # type: ignore[attr-defined]
    return exc


def is_unbilled(exc: BaseException) -> bool:
    """Whether `exc` was marked by `mark_unbilled`."""
    return bool(getattr(exc, "unbilled", False))


class QuotaExhaustedError(PermanentError):
    """The account's quota for this model is spent (OpenAI `insufficient_quota`, a Gemini daily
    or zero quota): waiting will not clear it, so the call layer sends this model nothing more
    for the rest of the run (its breaker trips at the first one)."""

    def __init__(self, message: str, *, lasting: str | None = "quota exhausted"):
        super().__init__(message, lasting=lasting)


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

    def image_limit(self) -> ImageLimit | None:
        """The provider's documented byte limits on images (`models.core.image_limit`), which
        the call layer fits every image within before sending it; None: no limit known."""
        return None

    def thinking_reserve(self) -> int | None:
        """The output tokens this backend lets the model think on top of `max_tokens` (the
        budget or the provider's default allowance it sends, `models.litellm.thinking`), which
        `tpm` pacing and estimates charge; None: the model options' budget says."""
        return None

    async def ready(self) -> None:
        """Load whatever a call needs (a lazy backend builds itself here); called before a
        call takes its limiter slot, so loading never counts against the call's timeout."""

    async def aclose(self) -> None:
        """Release resources (HTTP sessions, GPU memory)."""


class TextBackend(Backend, ABC):
    """A model that writes text: VLMs (with images) and LLMs (text only)."""

    capabilities: Capabilities = Capabilities()

    def use_memory(self, memory: Any) -> None:
        """Where the backend keeps what it learns of its endpoint across runs (the hub's
        `models.litellm.dialects.DialectMemory`, in the cache dir); by default nothing."""

    @abstractmethod
    async def generate(self, request: GenerateRequest) -> Generation:
        """Run one request. Concurrent calls are allowed; local backends batch them."""

    def batch_api(self) -> Any:
        """The provider's batch API for this model (`models.core.batch.BatchAPI`), or None
        where it has none titjudge drives."""
        return None


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

    async def embed_answered(
        self, texts: list[str]
    ) -> tuple[list[list[float] | BaseException], str | None]:
        """`embed_each` and the model that answered: a local model answers as itself; a
        served one (`litellm:`) says so in its reply (None when it did not say)."""
        return await self.embed_each(texts), self.spec.model_id

    async def embed_images(self, images: list[bytes]) -> list[list[float] | BaseException]:
        """One L2-normalised vector per image (encoded bytes), in the space `embed` puts texts
        in, or that image's own error; a text-only model raises PermanentError (a CLIP-family
        model, `clip:`, overrides this)."""
        raise PermanentError(f"{self.spec} embeds texts, not images")

    def batch_api(self) -> Any:
        """The provider's batch API for this model's embeddings (`models.core.batch.BatchAPI`
        with `embedding_body`), or None where it has none titjudge drives."""
        return None
