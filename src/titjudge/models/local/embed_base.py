"""What the `embed:` backend's two checkpoint layouts share: telling the layout from the
checkpoint's files, the token limit per text, and `LocalEmbeddingBackend` (device, dtype, batch
size, the micro-batcher that coalesces `embed` calls, the split of a failing window down to the
text at fault). The layouts: `models.local.embed_last_token` and `models.local.embed_st`;
choosing between them: `models.local.embed`."""

from __future__ import annotations

import asyncio
import json
from abc import abstractmethod
from collections.abc import Hashable
from typing import Any

import torch
import transformers

from titjudge.errors import ModelSpecError
from titjudge.models.core.base import EmbeddingBackend, PermanentError
from titjudge.models.core.options import ModelOptions
from titjudge.models.local.batching import MicroBatcher
from titjudge.models.local.common import (
    Checkpoint,
    cache_hint,
    first_line,
    free_accelerator_memory,
    is_out_of_memory,
    release_model,
    resolve_device,
    resolve_dtype,
    weights_fingerprint,
    with_torch_threads,
)
from titjudge.models.local.embed_plan import CONCURRENCY_PER_BATCH, CPU_BATCH
from titjudge.records.spec import ModelSpec

SENTENCE_TRANSFORMERS = "sentence-transformers"
LAST_TOKEN = "last-token"
#: sentence-transformers module types the embed: backend loads
SUPPORTED_MODULES = ("Transformer", "Pooling", "Normalize")
DEFAULT_MAX_LENGTH = 8192


# --------------------------------------------------------------------------- checkpoint layout


def _read_json(spec: ModelSpec, checkpoint: Checkpoint, name: str) -> Any | None:
    """A JSON file of the checkpoint (local folder or HF cache); None when absent."""
    from transformers.utils import cached_file

    found = cached_file(
        checkpoint.source,
        name,
        **checkpoint.load_kwargs(),
        _raise_exceptions_for_missing_entries=False,
        _raise_exceptions_for_connection_errors=False,
    )
    if found is None:
        return None
    try:
        with open(found, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelSpecError(f"{spec}: cannot read {name} of {checkpoint.source}: {exc}") from None


def read_layout(spec: ModelSpec, checkpoint: Checkpoint) -> str:
    """sentence-transformers when modules.json exists (its modules checked), else last-token."""
    modules = _read_json(spec, checkpoint, "modules.json")
    if modules is None:
        return LAST_TOKEN
    kinds = set()
    for module in modules:
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        if kind not in SUPPORTED_MODULES:
            raise ModelSpecError(
                f"{spec}: modules.json lists a {module.get('type')!r} module, which the embed: "
                f"backend does not implement (supported: {', '.join(SUPPORTED_MODULES)})"
            )
        kinds.add(kind)
    if not {"Transformer", "Pooling"} <= kinds:
        raise ModelSpecError(f"{spec}: modules.json needs a Transformer and a Pooling module")
    return SENTENCE_TRANSFORMERS


def capped_length(config: Any, requested: int | None, checkpoint_default: int | None) -> int:
    """The token limit per text: asked for, else the checkpoint's, else 8192; never past the
    model's position limit."""
    length = int(requested or checkpoint_default or DEFAULT_MAX_LENGTH)
    limit = getattr(config, "max_position_embeddings", None)
    return min(length, int(limit)) if limit else length


# --------------------------------------------------------------------------- backends


class LocalEmbeddingBackend(EmbeddingBackend):
    """What both layouts share: device, dtype, batch size, the micro-batcher, the run record."""

    layout: str
    model: Any
    #: length of every vector this backend returns
    dimension: int
    max_length: int

    def __init__(
        self,
        spec: ModelSpec,
        options: ModelOptions,
        checkpoint: Checkpoint,
        config: Any,
        params: dict[str, Any],
    ):
        super().__init__(spec)
        self.checkpoint = checkpoint
        self.config = config
        self.trust_remote_code = bool(params.get("trust_remote_code", False))
        self.device = resolve_device(spec, options.device)
        self.dtype = resolve_dtype(spec, options.dtype, self.device)
        self.batch_size = options.batch_size or (
            CPU_BATCH if self.device.type == "cpu" else 2 * CPU_BATCH
        )
        self.default_concurrency = CONCURRENCY_PER_BATCH * self.batch_size
        wait = float(params.get("max_wait_ms", 5.0)) / 1000.0
        # a window of many batches per flush, so length sorting has something to sort
        self._batcher: MicroBatcher[str, list[float]] = MicroBatcher(
            with_torch_threads(self._embed_isolated), max_items=16 * self.batch_size, max_wait=wait
        )
        self.load_model(checkpoint, config, params)

    @abstractmethod
    def load_model(self, checkpoint: Checkpoint, config: Any, params: dict[str, Any]) -> None:
        """Load the checkpoint's model and tokenizer; set `model`, `dimension` and
        `max_length`. Each layout's own (`embed_st`, `embed_last_token`)."""

    def _load_error(self, exc: BaseException) -> ModelSpecError:
        return ModelSpecError(
            f"{self.spec}: cannot load the embedding model from {self.checkpoint.source}: "
            f"{first_line(exc)}{cache_hint(self.checkpoint)}"
        )

    @property
    def batch_sizes(self) -> list[int]:
        """Texts per flush of the micro-batcher so far."""
        return self._batcher.batch_sizes

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return list(await asyncio.gather(*(self._batcher.submit(text) for text in texts)))

    async def embed_each(self, texts: list[str]) -> list[list[float] | BaseException]:
        """Each text's vector, or its own error: the other texts' vectors are kept."""
        if not texts:
            return []
        submitted = (self._batcher.submit(text) for text in texts)
        return list(await asyncio.gather(*submitted, return_exceptions=True))

    def _embed_isolated(self, key: Hashable, texts: list[str]) -> list[list[float] | BaseException]:
        """Worker thread: `_embed_window`, with an error raised for the whole window found its
        text: the window is split in halves, each run alone, down to single texts."""
        try:
            return self._embed_window(key, texts)
        except Exception as exc:
            if is_out_of_memory(exc):
                free_accelerator_memory()
            if len(texts) == 1:
                return [self._one_text_error(exc)]
            half = len(texts) // 2
            return self._embed_isolated(key, texts[:half]) + self._embed_isolated(key, texts[half:])

    def _one_text_error(self, exc: Exception) -> BaseException:
        if is_out_of_memory(exc):
            return PermanentError(f"out of accelerator memory embedding one text: {exc}")
        return exc

    def describe(self) -> dict[str, Any]:
        facts = super().describe()
        facts.update(
            layout=self.layout,
            normalize=True,
            max_length=self.max_length,
            dimension=self.dimension,
            model_type=getattr(self.config, "model_type", None),
            path=self.checkpoint.source if self.checkpoint.local else None,
            revision=self.checkpoint.commit or self.checkpoint.revision,
            fingerprint=weights_fingerprint(self.checkpoint),
            dtype=str(self.dtype).removeprefix("torch."),
            device=str(self.device),
            batch_size=self.batch_size,
            transformers=transformers.__version__,
            torch=torch.__version__,
            **self.layout_facts(),
        )
        return facts

    @abstractmethod
    def layout_facts(self) -> dict[str, Any]:
        """What the run records about how token states became a vector."""

    def classify_error(self, exc: BaseException) -> BaseException:
        if is_out_of_memory(exc):
            return PermanentError(f"{self.spec}: out of accelerator memory: {exc}")
        return exc

    async def aclose(self) -> None:
        release_model(self, "model")

    @abstractmethod
    def _embed_window(self, _key: Hashable, texts: list[str]) -> list[list[float] | BaseException]:
        """Worker thread: one vector (or the error of that text alone) per text, in order."""
