"""The `embed:` backend: a local text-embedding model, batched and length-sorted.

Two checkpoint layouts, told apart by the files (never by the model name):
- sentence-transformers (`modules.json` present): a Transformer module, then a Pooling
  module whose `config.json` names the pooling (cls / mean / max / mean_sqrt_len_tokens /
  weightedmean / lasttoken, legacy `pooling_mode_*` flags or the newer `pooling_mode`),
  then usually Normalize. `sentence_bert_config.json` gives max_seq_length / lowercasing.
  Modules that change the vector further (Dense, ...) are refused, not skipped.
- otherwise Qwen3-Embedding style: the hidden state of the last real token (the tokenizer
  appends <|endoftext|> and pads on the left), as the TIT-Score public example does.
Rows are always L2-normalised (the EmbeddingBackend contract; cosine is then a dot).

`embed(texts)` calls from many coroutines are coalesced by a micro-batcher; each window
of texts is tokenised, sorted by token length (padding then wastes little) and run in
batches of `batch_size` (default 16 on CPU) in a worker thread; results come back in the
caller's order. `params`: max_length (default: the checkpoint's max_seq_length, else
8192, capped at the model's position limit), revision, trust_remote_code, max_wait_ms.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import torch
import transformers

from titjudge.errors import ModelSpecError
from titjudge.models.base import EmbeddingBackend, PermanentError
from titjudge.models.local_common import (
    Checkpoint,
    MicroBatcher,
    cache_hint,
    check_params,
    first_line,
    free_accelerator_memory,
    is_out_of_memory,
    load_config,
    resolve_checkpoint,
    resolve_device,
    resolve_dtype,
    weights_fingerprint,
    with_torch_threads,
)
from titjudge.models.options import ModelOptions
from titjudge.models.spec import ModelSpec

log = logging.getLogger(__name__)

PARAMS: dict[str, type | tuple[type, ...]] = {
    "max_length": int,
    "revision": str,
    "trust_remote_code": bool,
    "max_wait_ms": (int, float),
}
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
_LEGACY_POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
DEFAULT_MAX_LENGTH = 8192


def build(spec: ModelSpec, options: ModelOptions) -> LocalEmbeddingBackend:
    """Registry entry point (`embed:`)."""
    return LocalEmbeddingBackend(spec, options)


# --------------------------------------------------------------------------- checkpoint layout


@dataclass(frozen=True)
class PoolingPlan:
    """How token states become one vector, as read from the checkpoint."""

    layout: str  # "sentence-transformers" | "last-token"
    modes: tuple[str, ...]
    transformer_path: str = ""
    max_seq_length: int | None = None
    lowercase: bool = False


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


def read_pooling_plan(spec: ModelSpec, checkpoint: Checkpoint) -> PoolingPlan:
    """sentence-transformers layout when modules.json exists, else last-token pooling."""
    modules = _read_json(spec, checkpoint, "modules.json")
    if modules is None:
        return PoolingPlan(layout="last-token", modes=("lasttoken",))
    transformer_path, pooling_path = None, None
    for module in modules:
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        if kind == "Transformer":
            transformer_path = str(module.get("path", ""))
        elif kind == "Pooling":
            pooling_path = str(module.get("path", ""))
        elif kind != "Normalize":
            raise ModelSpecError(
                f"{spec}: modules.json lists a {module.get('type')!r} module, which the embed: backend "
                "does not implement (supported: Transformer, Pooling, Normalize)"
            )
    if transformer_path is None or pooling_path is None:
        raise ModelSpecError(f"{spec}: modules.json needs a Transformer and a Pooling module")
    pooling = _read_json(spec, checkpoint, f"{pooling_path}/config.json".lstrip("/"))
    if pooling is None:
        raise ModelSpecError(
            f"{spec}: modules.json names pooling folder {pooling_path!r} but it has no config.json"
        )
    bert_config = (
        _read_json(spec, checkpoint, f"{transformer_path}/sentence_bert_config.json".lstrip("/"))
        or {}
    )
    return PoolingPlan(
        layout="sentence-transformers",
        modes=_pooling_modes(spec, pooling),
        transformer_path=transformer_path,
        max_seq_length=bert_config.get("max_seq_length"),
        lowercase=bool(bert_config.get("do_lower_case", False)),
    )


def _pooling_modes(spec: ModelSpec, pooling: dict[str, Any]) -> tuple[str, ...]:
    """Modes in the order sentence-transformers concatenates them."""
    if "pooling_mode" in pooling:
        raw = pooling["pooling_mode"]
        modes = (raw,) if isinstance(raw, str) else tuple(raw)
    else:
        modes = tuple(mode for flag, mode in _LEGACY_POOLING_FLAGS.items() if pooling.get(flag))
    unknown = [m for m in modes if m not in POOLING_MODES]
    if unknown:
        raise ModelSpecError(
            f"{spec}: unknown pooling mode(s) {unknown}; known: {', '.join(POOLING_MODES)}"
        )
    return modes or ("mean",)


# --------------------------------------------------------------------------- pooling


def pool(hidden: torch.Tensor, mask: torch.Tensor, modes: tuple[str, ...]) -> torch.Tensor:
    """Pool token states (batch, seq, dim) over real tokens, for any padding side; fp32 out."""
    hidden = hidden.float()
    weights = mask.unsqueeze(-1).float()
    seq_len = mask.shape[1]
    positions = torch.arange(seq_len, device=mask.device).expand_as(mask)
    first = torch.where(mask.bool(), positions, seq_len).min(dim=1).values.clamp(max=seq_len - 1)
    last = torch.where(mask.bool(), positions, -1).max(dim=1).values.clamp(min=0)
    rows = torch.arange(hidden.shape[0], device=hidden.device)
    counts = weights.sum(dim=1).clamp(min=1e-9)
    pooled = []
    for mode in modes:
        if mode == "cls":
            pooled.append(hidden[rows, first])
        elif mode == "lasttoken":
            pooled.append(hidden[rows, last])
        elif mode == "max":
            pooled.append(hidden.masked_fill(weights == 0, float("-inf")).max(dim=1).values)
        elif mode == "mean":
            pooled.append((hidden * weights).sum(dim=1) / counts)
        elif mode == "mean_sqrt_len_tokens":
            pooled.append((hidden * weights).sum(dim=1) / counts.sqrt())
        elif mode == "weightedmean":  # weight = 1-based position among the real tokens
            rank = (positions - first.unsqueeze(1) + 1).clamp(min=0).unsqueeze(-1).float() * weights
            pooled.append((hidden * rank).sum(dim=1) / rank.sum(dim=1).clamp(min=1e-9))
        else:
            raise ValueError(f"unknown pooling mode {mode!r}")
    return torch.cat(pooled, dim=-1)


# --------------------------------------------------------------------------- backend


class LocalEmbeddingBackend(EmbeddingBackend):
    """A local embedding model behind the EmbeddingBackend interface; see the module docstring."""

    def __init__(self, spec: ModelSpec, options: ModelOptions):
        super().__init__(spec)
        from transformers import AutoModel, AutoTokenizer

        params = check_params(spec, options.params, PARAMS)
        self.checkpoint = resolve_checkpoint(spec, params.get("revision"))
        trust = bool(params.get("trust_remote_code", False))
        self.config, self.checkpoint = load_config(spec, self.checkpoint, trust)
        self.plan = read_pooling_plan(spec, self.checkpoint)
        self.device = resolve_device(spec, options.device)
        self.dtype = resolve_dtype(spec, options.dtype, self.device)
        self.batch_size = options.batch_size or (16 if self.device.type == "cpu" else 32)
        common: dict[str, Any] = {"trust_remote_code": trust, **self.checkpoint.load_kwargs()}
        if self.plan.transformer_path:
            common["subfolder"] = self.plan.transformer_path
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.checkpoint.source, **common)
            self.model = AutoModel.from_pretrained(
                self.checkpoint.source, dtype=self.dtype, device_map=str(self.device), **common
            ).eval()
        except (OSError, ValueError) as exc:
            raise ModelSpecError(
                f"{spec}: cannot load the embedding model from {self.checkpoint.source}: "
                f"{first_line(exc)}{cache_hint(self.checkpoint)}"
            ) from None
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.max_length = self._max_length(params.get("max_length"))
        self.default_concurrency = 4 * self.batch_size
        wait = float(params.get("max_wait_ms", 5.0)) / 1000.0
        # a window of many batches per flush, so length sorting has something to sort
        self._batcher: MicroBatcher[str, list[float]] = MicroBatcher(
            with_torch_threads(self._embed_window), max_items=16 * self.batch_size, max_wait=wait
        )

    def _max_length(self, requested: int | None) -> int:
        length = int(requested or self.plan.max_seq_length or DEFAULT_MAX_LENGTH)
        limit = getattr(self.config, "max_position_embeddings", None)
        return min(length, int(limit)) if limit else length

    @property
    def batch_sizes(self) -> list[int]:
        """Texts per flush of the micro-batcher so far."""
        return self._batcher.batch_sizes

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return list(await asyncio.gather(*(self._batcher.submit(text) for text in texts)))

    def describe(self) -> dict[str, Any]:
        facts = super().describe()
        facts.update(
            layout=self.plan.layout,
            pooling="+".join(self.plan.modes),
            normalize=True,
            max_length=self.max_length,
            model_type=getattr(self.config, "model_type", None),
            path=self.checkpoint.source if self.checkpoint.local else None,
            revision=self.checkpoint.commit or self.checkpoint.revision,
            fingerprint=weights_fingerprint(self.checkpoint),
            padding_side=self.tokenizer.padding_side,
            dtype=str(self.dtype).removeprefix("torch."),
            device=str(self.device),
            batch_size=self.batch_size,
            transformers=transformers.__version__,
            torch=torch.__version__,
        )
        return facts

    def classify_error(self, exc: BaseException) -> BaseException:
        if is_out_of_memory(exc):
            return PermanentError(f"{self.spec}: out of accelerator memory: {exc}")
        return exc

    async def aclose(self) -> None:
        self.model = None
        gc.collect()
        free_accelerator_memory()

    # ------------------------------------------------------------------ worker thread

    def _embed_window(self, _key: Hashable, texts: list[str]) -> list[list[float] | BaseException]:
        """Tokenise, sort by length, run in batches, return vectors in input order."""
        if self.plan.lowercase:
            texts = [text.lower() for text in texts]
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
        """One forward pass; on out-of-memory, halves down to single texts."""
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
        vectors = pool(hidden, batch["attention_mask"], self.plan.modes)
        vectors = torch.nn.functional.normalize(vectors, p=2, dim=-1)
        return vectors.cpu().tolist()
