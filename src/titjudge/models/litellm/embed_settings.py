"""What a served embedding model (`litellm:` in an embedding judge) means, without litellm.

The embedding judge may name any litellm embedding model: OpenAI (`openai/text-embedding-3-small`),
Gemini (`gemini/gemini-embedding-001`), or an OpenAI-compatible `/v1/embeddings` server such as
vLLM or TEI (`hosted_vllm/Qwen/Qwen3-Embedding-8B` with `api_base`). Worked out here from the
config alone, so a fully cached re-run never imports litellm: the texts per request, the key,
the parameters sent with every request (`dimensions`, `encoding_format`, Gemini's `task_type`;
they enter the cache key through `params`), and the run record.

Texts per request, at most: OpenAI 2048 (its embeddings reference: "any array must be 2048
dimensions or less"), Gemini 100 (batchEmbedContents answers "at most 100 requests can be in
one batch"), any other server 32 (TEI's default `--max-client-batch-size`; vLLM takes more).
`batch_size` lowers the cap, or raises it for a server that takes more.

A model that litellm's bundled model map lists as a chat model (`openai/gpt-4o`) is refused:
it cannot embed. A model the map does not know (anything served by vLLM or TEI) is accepted.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from titjudge.errors import ConfigError
from titjudge.models.core.lazy import BackendPlan
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.settings import DEFAULT_CONCURRENCY, configured_key
from titjudge.records.spec import ModelSpec

#: texts per request each provider accepts
OPENAI_MAX_BATCH = 2048
GEMINI_MAX_BATCH = 100
SERVER_MAX_BATCH = 32
#: litellm's bundled copy of its model map (read as JSON: importing litellm takes ~3 s)
_MODEL_MAP = "model_prices_and_context_window_backup.json"


@dataclass
class EmbeddingSettings:
    api_base: str | None
    api_key_env: str | None
    timeout: float
    #: sent with every request (`dimensions`, `encoding_format`, `task_type`, ...)
    params: dict[str, Any]
    #: texts per request
    max_batch: int
    #: the key read from `api_key_env`; None: litellm reads the provider's usual variable
    api_key: str | None

    def facts(self) -> dict[str, Any]:
        """The run record's facts (never the key itself)."""
        return {
            "api_base": self.api_base,
            "api_key_env": self.api_key_env,
            "params": self.params,
            "max_batch": self.max_batch,
        }


def provider_limit(spec: ModelSpec, api_base: str | None) -> int:
    """The most texts one request of this provider may carry."""
    provider, slash, _ = spec.model_id.partition("/")
    if not slash:
        provider = "openai" if spec.model_id.startswith("text-embedding") else ""
    if provider == "gemini":
        return GEMINI_MAX_BATCH
    if provider == "openai" and not api_base:
        return OPENAI_MAX_BATCH
    return SERVER_MAX_BATCH


def embedding_settings(
    spec: ModelSpec, options: ModelOptions, *, read_key: bool = True
) -> EmbeddingSettings:
    """The settings of one served embedding model; a chat model is a ConfigError here, before
    any call. `read_key` as in `litellm_settings.settings`: the plan reads no key."""
    problem = not_an_embedding_model(spec)
    if problem is not None:
        raise ConfigError(f"{spec}: {problem}")
    if options.thinking is not None:
        raise ConfigError(f"{spec}: 'thinking' applies to text models, not to embedding models")
    if isinstance(options.api_base, list):
        raise ConfigError(
            f"{spec}: an embedding model takes one api_base, not a list ({len(options.api_base)} "
            "endpoints); several endpoints are for text models (describers and LLM judges)"
        )
    key = configured_key(spec, options) if read_key else None
    limit = provider_limit(spec, options.api_base)
    return EmbeddingSettings(
        api_base=options.api_base,
        api_key_env=options.api_key_env,
        timeout=options.timeout,
        params=copy.deepcopy(dict(options.params)),
        max_batch=options.batch_size or limit,
        api_key=key,
    )


def plan(spec: ModelSpec, options: ModelOptions) -> BackendPlan:
    """The lazy backend's plan (registry entry point): no key is read."""
    found = embedding_settings(spec, options, read_key=False)
    return BackendPlan(
        default_concurrency=DEFAULT_CONCURRENCY, facts=found.facts(), max_batch=found.max_batch
    )


def not_an_embedding_model(spec: ModelSpec) -> str | None:
    """Why `spec` cannot embed, when litellm's bundled model map lists it as another kind of
    model (chat, completion, ...); None when it is an embedding model or not listed."""
    mode = _listed_mode(spec.model_id)
    if mode is None or mode == "embedding":
        return None
    return (
        f"litellm's model map lists it as a {mode} model, which cannot embed; an embedding "
        "judge needs an embedding model (e.g. litellm:openai/text-embedding-3-small)"
    )


def _listed_mode(model_id: str) -> str | None:
    """The model's `mode` in litellm's bundled model map (chat, embedding, ...), or None."""
    found = _model_map()
    provider, _, rest = model_id.partition("/")
    for name in (model_id, rest if provider == "openai" else None):
        entry = found.get(name) if name else None
        if isinstance(entry, dict) and isinstance(entry.get("mode"), str):
            return str(entry["mode"])
    return None


@cache
def _model_map() -> dict[str, Any]:
    """litellm's bundled model map, read from its package folder without importing it."""
    found = importlib.util.find_spec("litellm")
    folders = list(found.submodule_search_locations or []) if found else []
    for folder in folders:
        path = Path(folder) / _MODEL_MAP
        if path.is_file():
            loaded = json.loads(path.read_text(encoding="utf-8"))
            return loaded if isinstance(loaded, dict) else {}
    return {}


__all__ = [
    "EmbeddingSettings",
    "embedding_settings",
    "not_an_embedding_model",
    "plan",
    "provider_limit",
]
