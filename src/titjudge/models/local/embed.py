"""The `embed:` backend: a local text-embedding model, batched.

Two checkpoint layouts, told apart by the files (never by the model name):
- sentence-transformers (`modules.json` present): loaded by sentence-transformers itself
  (`models.local.embed_st`), which runs the checkpoint's own modules. Only Transformer, Pooling and
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

from titjudge.errors import MissingDependencyError, install_hint
from titjudge.models.core.options import ModelOptions
from titjudge.models.local.common import (
    check_params,
    load_config,
    quiet_third_party_bars,
)
from titjudge.models.local.embed_base import (
    LAST_TOKEN,
    LocalEmbeddingBackend,
    read_layout,
)
from titjudge.models.local.embed_last_token import LastTokenEmbeddingBackend
from titjudge.models.local.embed_plan import PARAMS, embedding_checkpoint
from titjudge.records.spec import ModelSpec


def build(spec: ModelSpec, options: ModelOptions) -> LocalEmbeddingBackend:
    """Registry entry point (`embed:`): the backend for the checkpoint's layout."""
    params = check_params(spec, options.params, PARAMS)
    checkpoint = embedding_checkpoint(spec, params.get("revision"))
    quiet_third_party_bars()
    config, checkpoint = load_config(spec, checkpoint, bool(params.get("trust_remote_code")))
    if read_layout(spec, checkpoint) == LAST_TOKEN:
        return LastTokenEmbeddingBackend(spec, options, checkpoint, config, params)
    try:
        from titjudge.models.local.embed_st import SentenceTransformerBackend
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "sentence_transformers":
            raise
        raise MissingDependencyError(
            f"{spec}: a sentence-transformers checkpoint needs 'sentence_transformers', which "
            f"is not installed; install it with: {install_hint('local')}"
        ) from None
    return SentenceTransformerBackend(spec, options, checkpoint, config, params)


__all__ = ["build"]
