"""OpenAI's Batch API for a `litellm:openai/...` embedding model (`batch: true` on an
embedding judge), through the same litellm files and batches functions as text models.

OpenAI's Batch guide (https://developers.openai.com/api/docs/guides/batch) lists
`/v1/embeddings` among a job's endpoints, with at most 50,000 embedding inputs in one file
(beside the 50,000 requests and 200 MB). Each line's body is litellm's own body for the online
`/v1/embeddings` call (`litellm.utils.return_raw_request` for an embedding), so a text's
vector is the one its online call would get; the collector (`models.calls.batch.collect`) sends one
text per line, each cached under the text's own key, as online. A reply is OpenAI's embeddings
list; its vectors are placed by `index` and L2-normalised as the online backend does
(`models.litellm.embed`), and it costs litellm's batch rate for the model (its `_batches` price,
else half the list price).

Azure OpenAI's batch API takes no embeddings ("Can I use the batch API for embeddings
models? This is currently not supported.", https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/batch
FAQ): `batch: true` on an Azure embedding model is refused when the config is read.
"""

from __future__ import annotations

from typing import Any, Protocol

from titjudge.models.core.base import PermanentError
from titjudge.models.core.batch import BATCH_EMBEDDING_PROVIDERS, Embedded, LineResult
from titjudge.models.litellm.batch.api import OpenAIBatchAPI, batch_site
from titjudge.models.litellm.batch.price import batch_cost
from titjudge.models.litellm.batch.site import BatchSite
from titjudge.models.litellm.embed_vectors import normalised, vectors_by_index
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.raw import built

#: OpenAI's limit on embedding inputs in one batch file (the Batch guide, "Rate limits")
OPENAI_MAX_EMBEDDING_INPUTS = 50_000


class BuildsEmbeddingKwargs(Protocol):
    def request_kwargs(self, texts: list[str]) -> dict[str, Any]: ...


class OpenAIEmbeddingBatchAPI(OpenAIBatchAPI):
    """OpenAI's files and batches endpoints for one embedding model's lines."""

    def __init__(self, site: BatchSite, embedder: BuildsEmbeddingKwargs):
        super().__init__(site)
        self._embedder = embedder
        # one text per line: the inputs' limit is the lines'
        self.max_requests = min(self.max_requests, OPENAI_MAX_EMBEDDING_INPUTS)

    def embedding_body(self, texts: list[str]) -> dict[str, Any]:
        """The JSON body the online `/v1/embeddings` call sends for `texts`."""
        from litellm.types.utils import CallTypes
        from litellm.utils import return_raw_request

        kwargs = self._embedder.request_kwargs(texts)
        kwargs.pop("api_key", None)  # return_raw_request passes its own stand-in
        made = return_raw_request(CallTypes.embedding, kwargs)  # type: ignore[call-overload]
        raw = built(dict(made))
        body = dict(raw.get("raw_request_body") or {})
        body.update(body.pop("extra_body", None) or {})
        return body

    def body(self, request: Any) -> dict[str, Any]:
        raise PermanentError("an embedding model's batch lines are built by embedding_body")

    def _endpoint(self) -> str:
        return "/v1/embeddings"

    def _line_result(self, row: dict[str, Any]) -> LineResult:
        """A failed line as text lines' are; an answered one as its vectors."""
        found = super()._line_result(row)
        return found if found.error is not None else self._embedded(row, found.custom_id)

    def _generation(self, body: dict[str, Any]) -> Any:
        return None  # an embeddings reply is read by `_embedded`

    def _embedded(self, row: dict[str, Any], custom_id: str) -> LineResult:
        body = (row.get("response") or {}).get("body") or {}
        try:
            data = body.get("data")
            vectors = vectors_by_index(body, len(data) if isinstance(data, list) else 0)
        except PermanentError as exc:
            return LineResult(custom_id, error=f"batch line failed: {exc}")
        model = body.get("model")
        return LineResult(
            custom_id,
            embedded=Embedded(
                [normalised(v) for v in vectors],
                str(model) if model else None,
                self._embedding_cost(body.get("usage")),
            ),
        )

    def _embedding_cost(self, usage: Any) -> float | None:
        """litellm's batch price of the line's input tokens; None where it does not price
        the model or the reply reports no usage."""
        if not isinstance(usage, dict) or not isinstance(usage.get("prompt_tokens"), int):
            return None
        litellm = litellm_module()

        tokens = int(usage["prompt_tokens"])
        used = litellm.Usage(prompt_tokens=tokens, completion_tokens=0, total_tokens=tokens)
        return batch_cost(used, self._model, self._provider)


def embedding_batch_api_for(
    backend: Any, model_id: str, params: dict[str, Any], api_key: str | None
) -> OpenAIEmbeddingBatchAPI | None:
    """The batch API for `backend`'s embeddings, or None where its provider's takes none."""
    site = batch_site(backend, model_id, params, api_key, backend.settings)
    if site is None or site.provider not in BATCH_EMBEDDING_PROVIDERS:
        return None
    return OpenAIEmbeddingBatchAPI(site, backend)


__all__ = [
    "OPENAI_MAX_EMBEDDING_INPUTS",
    "OpenAIEmbeddingBatchAPI",
    "embedding_batch_api_for",
]
