"""sentence-transformers checkpoints for the `embed:` backend, run by sentence-transformers.

The checkpoint's own modules decide the vector (its pooling, its lower-casing, its
max_seq_length); `encode` sorts each window of texts by length and runs it in batches of
`batch_size`. Rows come back L2-normalised. An out-of-memory error halves the batch size and
runs the window again, down to one text at a time; one text at a time still out of memory, or
any other error, is raised for `LocalEmbeddingBackend._embed_isolated` to find the text at
fault.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import sentence_transformers
from sentence_transformers import SentenceTransformer

from titjudge.models.local.common import Checkpoint, free_accelerator_memory, is_out_of_memory
from titjudge.models.local.embed_base import (
    SENTENCE_TRANSFORMERS,
    LocalEmbeddingBackend,
    capped_length,
)


class SentenceTransformerBackend(LocalEmbeddingBackend):
    """A sentence-transformers checkpoint behind the EmbeddingBackend interface."""

    layout = SENTENCE_TRANSFORMERS

    def load_model(self, checkpoint: Checkpoint, config: Any, params: dict[str, Any]) -> None:
        try:
            self.model = SentenceTransformer(
                checkpoint.source,
                device=str(self.device),
                trust_remote_code=self.trust_remote_code,
                model_kwargs={"dtype": self.dtype},
                **checkpoint.load_kwargs(),
            )
        except (OSError, ValueError) as exc:
            raise self._load_error(exc) from None
        self.model.eval()
        self.max_length = capped_length(config, params.get("max_length"), self.model.max_seq_length)
        self.model.max_seq_length = self.max_length
        self.dimension = int(self.model.get_embedding_dimension() or config.hidden_size)

    def layout_facts(self) -> dict[str, Any]:
        return {
            "pooling": pooling_name(self.model),
            "padding_side": self.model.tokenizer.padding_side,
            "sentence_transformers": sentence_transformers.__version__,
        }

    def _embed_window(self, _key: Hashable, texts: list[str]) -> list[list[float] | BaseException]:
        batch_size = self.batch_size
        while True:
            try:
                vectors = self.model.encode(
                    texts,
                    batch_size=batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            except Exception as exc:
                if not is_out_of_memory(exc) or batch_size == 1:
                    raise
                free_accelerator_memory()
                batch_size //= 2
                continue
            return [[float(x) for x in row] for row in vectors]


def pooling_name(model: SentenceTransformer) -> str:
    """The checkpoint's pooling modes joined by '+', as its Pooling module names them."""
    for module in model:
        modes = getattr(module, "pooling_mode", None)
        if isinstance(modes, str):
            return modes
        if modes:
            return "+".join(modes)
    raise ValueError("the checkpoint has no Pooling module")
