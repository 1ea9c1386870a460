"""The Qwen3-Embedding layout of the `embed:` backend: the hidden state of the last real token
(the tokenizer appends <|endoftext|> and pads on the left), as Qwen's public example does,
L2-normalised."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import torch

from titjudge.models.core.base import PermanentError
from titjudge.models.local.common import (
    Checkpoint,
    free_accelerator_memory,
    is_out_of_memory,
)
from titjudge.models.local.embed_base import LAST_TOKEN, LocalEmbeddingBackend, capped_length


class LastTokenEmbeddingBackend(LocalEmbeddingBackend):
    """Qwen3-Embedding style: last real token's hidden state, L2-normalised."""

    layout = LAST_TOKEN

    def load_model(self, checkpoint: Checkpoint, config: Any, params: dict[str, Any]) -> None:
        from transformers import AutoModel, AutoTokenizer

        common: dict[str, Any] = {
            "trust_remote_code": self.trust_remote_code,
            **checkpoint.load_kwargs(),
        }
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(checkpoint.source, **common)
            self.model = AutoModel.from_pretrained(
                checkpoint.source, dtype=self.dtype, device_map=str(self.device), **common
            ).eval()
        except (OSError, ValueError) as exc:
            raise self._load_error(exc) from None
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.max_length = capped_length(config, params.get("max_length"), None)
        self.dimension = int(config.hidden_size)

    def layout_facts(self) -> dict[str, Any]:
        return {"pooling": "lasttoken", "padding_side": self.tokenizer.padding_side}

    def _embed_window(self, _key: Hashable, texts: list[str]) -> list[list[float] | BaseException]:
        """Tokenise, sort by length, run in batches, return vectors in input order."""
        encoded = self.tokenizer(texts, truncation=True, max_length=self.max_length)
        names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in encoded]
        lengths = [len(ids) for ids in encoded["input_ids"]]
        results: list[list[float] | BaseException | None] = [None] * len(texts)
        order = sorted((i for i in range(len(texts)) if lengths[i] > 0), key=lambda i: -lengths[i])
        for i in range(len(texts)):
            if lengths[i] == 0:
                results[i] = PermanentError("cannot embed a text that tokenises to nothing")
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            features = [{name: encoded[name][i] for name in names} for i in chunk]
            self._run_chunk(chunk, features, results)
        return [r if r is not None else RuntimeError("text was not embedded") for r in results]

    def _run_chunk(
        self,
        chunk: list[int],
        features: list[dict[str, Any]],
        results: list[list[float] | BaseException | None],
    ) -> None:
        """One forward pass; on out-of-memory, halves down to single texts (any other error
        is raised, for `_embed_isolated` to find its text)."""
        try:
            vectors = self._forward(features)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            free_accelerator_memory()
            if len(chunk) == 1:
                results[chunk[0]] = PermanentError(
                    f"out of accelerator memory embedding one text: {exc}"
                )
                return
            half = len(chunk) // 2
            self._run_chunk(chunk[:half], features[:half], results)
            self._run_chunk(chunk[half:], features[half:], results)
            return
        for index, vector in zip(chunk, vectors, strict=True):
            results[index] = vector

    @torch.inference_mode()
    def _forward(self, features: list[dict[str, Any]]) -> list[list[float]]:
        batch = self.tokenizer.pad(features, return_tensors="pt").to(self.device)
        hidden = self.model(**batch).last_hidden_state
        vectors = last_token(hidden, batch["attention_mask"])
        vectors = torch.nn.functional.normalize(vectors, p=2, dim=-1)
        return vectors.cpu().tolist()


def last_token(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Each row's state (batch, seq, dim) at its last real token, for either padding side; fp32."""
    positions = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)
    last = torch.where(mask.bool(), positions, -1).max(dim=1).values.clamp(min=0)
    rows = torch.arange(hidden.shape[0], device=hidden.device)
    return hidden[rows, last].float()
