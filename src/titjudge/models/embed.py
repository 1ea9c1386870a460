"""The `embed:` backend: a local text-embedding model, batched.

Two checkpoint layouts, told apart by the files (never by the model name):
- sentence-transformers (`modules.json` present): loaded by sentence-transformers itself
  (`models.embed_st`), which runs the checkpoint's own modules. Only Transformer, Pooling and
  Normalize modules are accepted: `modules.json` may name any importable class, and a module
  that changes the vector further (Dense, ...) is refused, not run unrecorded.
- otherwise Qwen3-Embedding style (here): the hidden state of the last real token (the
  tokenizer appends <|endoftext|> and pads on the left), as Qwen's public example does.
Rows are always L2-normalised (the EmbeddingBackend contract; cosine is then a dot).

`embed(texts)` calls from many coroutines are coalesced by a micro-batcher; each window of
texts is run in batches of `batch_size` (default 16 on CPU, 32 on an accelerator) in a worker
thread, sorted by token length so padding wastes little; results come back in the caller's
order. A text's failure is its own: a window that raises is split in halves, each run alone,
down to the single text at fault, so which texts shared a window never decides which fail
(`embed_each` hands each text's error back on its own). `params`: max_length (default: the checkpoint's max_seq_length, else 8192, capped at
the model's position limit), revision, trust_remote_code, max_wait_ms.
"""

from __future__ import annotations

import asyncio
import gc
import json
from abc import abstractmethod
from collections.abc import Hashable
from typing import Any

import torch
import transformers

from titjudge.errors import MissingDependencyError, ModelSpecError, install_hint
from titjudge.models.base import EmbeddingBackend, PermanentError
from titjudge.models.embed_plan import CONCURRENCY_PER_BATCH, CPU_BATCH, PARAMS
from titjudge.models.local_common import (
    Checkpoint,
    MicroBatcher,
    cache_hint,
    check_params,
    first_line,
    free_accelerator_memory,
    is_out_of_memory,
    load_config,
    quiet_third_party_bars,
    resolve_checkpoint,
    resolve_device,
    resolve_dtype,
    weights_fingerprint,
    with_torch_threads,
)
from titjudge.models.options import ModelOptions
from titjudge.models.spec import ModelSpec

SENTENCE_TRANSFORMERS = "sentence-transformers"
LAST_TOKEN = "last-token"
#: sentence-transformers module types the embed: backend loads
SUPPORTED_MODULES = ("Transformer", "Pooling", "Normalize")
DEFAULT_MAX_LENGTH = 8192


def build(spec: ModelSpec, options: ModelOptions) -> LocalEmbeddingBackend:
    """Registry entry point (`embed:`): the backend for the checkpoint's layout."""
    params = check_params(spec, options.params, PARAMS)
    checkpoint = resolve_checkpoint(spec, params.get("revision"))
    quiet_third_party_bars()
    config, checkpoint = load_config(spec, checkpoint, bool(params.get("trust_remote_code")))
    if read_layout(spec, checkpoint) == LAST_TOKEN:
        return LastTokenEmbeddingBackend(spec, options, checkpoint, config, params)
    try:
        from titjudge.models.embed_st import SentenceTransformerBackend
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "sentence_transformers":
            raise
        raise MissingDependencyError(
            f"{spec}: a sentence-transformers checkpoint needs 'sentence_transformers', which "
            f"is not installed; install it with: {install_hint('local')}"
        ) from None
    return SentenceTransformerBackend(spec, options, checkpoint, config, params)


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
        self.model = None
        gc.collect()
        free_accelerator_memory()

    @abstractmethod
    def _embed_window(self, _key: Hashable, texts: list[str]) -> list[list[float] | BaseException]:
        """Worker thread: one vector (or the error of that text alone) per text, in order."""


class LastTokenEmbeddingBackend(LocalEmbeddingBackend):
    """Qwen3-Embedding style: last real token's hidden state, L2-normalised."""

    layout = LAST_TOKEN

    def __init__(
        self,
        spec: ModelSpec,
        options: ModelOptions,
        checkpoint: Checkpoint,
        config: Any,
        params: dict[str, Any],
    ):
        super().__init__(spec, options, checkpoint, config, params)
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
