"""Served embeddings: `litellm:` models in an embedding judge, through `litellm.aembedding`.

One request per `embed` call (the call layer splits texts into requests of at most
`max_batch`, see `models.litellm.embed_settings`), with litellm's own retries off
(`num_retries=0, max_retries=0`): the call layer retries, on transient errors only, and its
errors are classified as text calls' are (`models.litellm.errors.classify.classify_litellm_error`). litellm's
OpenAI embedding route reads `max_retries=0` as "unset" (`max_retries or
litellm.DEFAULT_MAX_RETRIES`, in llms/openai/openai.py) and sets the result on its OpenAI
client, even on one passed in, which would then retry twice on its own; so this module sets
litellm's default to 0 as well (titjudge never wants litellm to retry).

The reply is OpenAI's embeddings list, `{"object": "list", "data": [{"object": "embedding",
"index": i, "embedding": [...]}], "model", "usage"}`, which vLLM's and TEI's `/v1/embeddings`
share and litellm builds from Gemini's batchEmbedContents. Each vector is placed by its
`index`, never by its position in `data`; a `base64` vector (`encoding_format: base64`) is
little-endian float32, as OpenAI packs it. Rows come back L2-normalised; a zero vector is left
as it is, for the call layer to refuse.

A 400 or 422 (litellm's BadRequestError, ContextWindowExceededError, UnprocessableEntityError)
is an `InputRejectedError`, which the call layer answers by splitting the request to find the
text at fault (`models.calls.embedding_client`), unless it names something other than the texts: a
parameter (`"param": "dimensions"`; litellm's own UnsupportedParamsError), or a key (Gemini
answers a bad key with a 400 API_KEY_INVALID). Those, like a 401, 403, 404 or spent quota,
stay the whole request's.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from titjudge.models.core.base import EmbeddingBackend, InputRejectedError, PermanentError
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.backend import check_setup
from titjudge.models.litellm.embed_settings import embedding_settings
from titjudge.models.litellm.embed_vectors import field, normalised, vectors_by_index
from titjudge.models.litellm.errors.classify import classify_litellm_error
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.settings import DEFAULT_CONCURRENCY
from titjudge.records.spec import ModelSpec
from titjudge.safety import register_secret

litellm = litellm_module()
litellm.DEFAULT_MAX_RETRIES = 0  # type: ignore[misc]  # read at call time, see above


class LiteLLMEmbeddingBackend(EmbeddingBackend):
    default_concurrency = DEFAULT_CONCURRENCY

    def __init__(self, spec: ModelSpec, options: ModelOptions):
        super().__init__(spec)
        self.settings = embedding_settings(spec, options)
        self.max_batch = self.settings.max_batch
        check_setup(spec, self.settings.api_base, self.settings.api_key_env, self.settings.params)
        register_secret(self.settings.api_key)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.settings.facts()}

    def request_kwargs(self, texts: list[str]) -> dict[str, Any]:
        """Everything sent for `texts` (the tests read this to see what a provider gets)."""
        kwargs: dict[str, Any] = {
            "model": self.spec.model_id,
            "input": list(texts),
            "timeout": self.settings.timeout,
            "num_retries": 0,
            "max_retries": 0,
            **copy.deepcopy(self.settings.params),
        }
        if self.settings.api_base:
            kwargs["api_base"] = self.settings.api_base
        if self.settings.api_key:
            kwargs["api_key"] = self.settings.api_key
        return kwargs

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors, _ = await self.embed_answered(texts)
        return [v for v in vectors if not isinstance(v, BaseException)]

    async def embed_answered(
        self, texts: list[str]
    ) -> tuple[list[list[float] | BaseException], str | None]:
        """The vectors and the model the reply names (OpenAI's and vLLM's embeddings replies
        carry `model`); None when it names none."""
        if not texts:
            return [], None
        response = await litellm.aembedding(**self.request_kwargs(texts))
        vectors = [normalised(vector) for vector in vectors_by_index(response, len(texts))]
        model = field(response, "model")
        return list(vectors), str(model) if model else None

    def batch_api(self) -> Any:
        """OpenAI's Batch API for this model's embeddings, or None (`models.litellm.batch.embed`)."""
        from titjudge.models.litellm.batch.embed import embedding_batch_api_for

        return embedding_batch_api_for(
            self, self.spec.model_id, self.settings.params, self.settings.api_key
        )

    def classify_error(self, exc: BaseException) -> BaseException:
        mapped = classify_litellm_error(exc)
        if rejects_input(exc, mapped):
            return InputRejectedError(str(mapped))
        return mapped


#: a refusal that names something other than the texts: a parameter, or a key
_NOT_THE_INPUT = re.compile(
    r"""["']param["']\s*:\s*["'](?!input\b)[^"']+["']|api[_ ]?key""", re.IGNORECASE
)


def rejects_input(exc: BaseException, mapped: BaseException) -> bool:
    """Whether litellm's `exc` (classified as `mapped`) refuses the request for the texts it
    carries: a 400 or 422 naming no parameter but the input, and no key."""
    if type(mapped) is not PermanentError:
        return False
    if not isinstance(exc, (litellm.BadRequestError, litellm.UnprocessableEntityError)):
        return False
    if isinstance(exc, litellm.UnsupportedParamsError):
        return False
    body = f"{getattr(exc, 'message', None) or ''}\n{exc}"
    return _NOT_THE_INPUT.search(body) is None


def build(spec: ModelSpec, options: ModelOptions) -> LiteLLMEmbeddingBackend:
    return LiteLLMEmbeddingBackend(spec, options)
