"""What an `hf:` model's config means, worked out without torch or the weights.

Its parameters and thinking switch are checked, its checkpoint's config.json read as JSON (a
local folder, or a hub id already in the Hugging Face cache), and its libraries looked for, so
a fully cached re-run knows its cache keys and what the model can take (images or not) without
loading it; the weights load on the first call not in the cache (`models.core.lazy`). A hub id
whose config.json is not cached gets no plan: the backend is built (and downloaded) at once.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from typing import Any

from titjudge.errors import ConfigError, MissingDependencyError, ModelSpecError, install_hint
from titjudge.models.core.base import Capabilities
from titjudge.models.core.lazy import BackendPlan
from titjudge.models.core.options import ModelOptions
from titjudge.models.core.thinking import ThinkingError, plan_thinking
from titjudge.models.local.common import (
    Checkpoint,
    check_gguf_support,
    check_params,
    resolve_checkpoint,
)
from titjudge.records.spec import ModelSpec

PARAMS: dict[str, type | tuple[type, ...]] = {
    "enable_thinking": bool,
    "revision": str,
    "trust_remote_code": bool,
    "repetition_penalty": (int, float),
    "top_k": int,
    "top_p": (int, float),
    "attn_implementation": str,
    "max_wait_ms": (int, float),
}
#: requests per model.generate batch when the config gives none (CPU; an accelerator doubles it)
CPU_BATCH = 8


@dataclass(frozen=True)
class ThinkingSetup:
    """The chat template's thinking switch, the tokens reserved for thinking, and what the
    `thinking` option adds to every cache key."""

    enable: bool
    reserve: int
    facts: dict[str, Any] | None


def thinking_setup(spec: ModelSpec, options: ModelOptions, params: dict[str, Any]) -> ThinkingSetup:
    """`thinking` (the documented option) or the older `params.enable_thinking`; default off."""
    thinking = options.thinking
    if thinking is None:
        return ThinkingSetup(bool(params.get("enable_thinking", False)), 0, None)
    if "enable_thinking" in params and bool(params["enable_thinking"]) != thinking.enabled:
        raise ConfigError(
            f"{spec}: 'thinking' and params.enable_thinking disagree; keep only 'thinking'"
        )
    try:
        plan = plan_thinking(spec, thinking)
    except ThinkingError as exc:
        raise ConfigError(str(exc)) from None
    return ThinkingSetup(
        bool(plan.enable_thinking), plan.reserve, thinking.model_dump(exclude_none=True)
    )


def takes_images(config: dict[str, Any]) -> bool:
    """Whether the checkpoint is an image-text-to-text model: its config has a vision tower.
    (The built backend decides from transformers' model classes; a disagreement is an error
    when it loads.)"""
    return isinstance(config.get("vision_config"), dict)


def plan(spec: ModelSpec, options: ModelOptions) -> BackendPlan | None:
    """The lazy backend's plan (registry entry point); None: build it now."""
    params = check_params(spec, options.params, PARAMS)
    checkpoint = resolve_checkpoint(spec, params.get("revision"))
    thinking = thinking_setup(spec, options, params)
    needed: tuple[str, ...] = ("torch", "transformers", "huggingface_hub")
    if checkpoint.gguf_file is not None:  # transformers reads GGUF with the gguf package
        needed += ("gguf",)
    for module in needed:
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(
                f"the 'hf:' backend needs {module!r}, which is not installed; install it "
                f"with: {install_hint('local')}"
            )
    if checkpoint.gguf_file is not None:
        check_gguf_support(spec)
    config = _config_json(spec, checkpoint)
    if config is None:
        return None
    batch = options.batch_size or CPU_BATCH
    return BackendPlan(
        capabilities=Capabilities(
            vision=takes_images(config), json_schema=constrains(options), logprobs=True
        ),
        default_concurrency=2 * batch,
        cache_facts=hf_cache_facts(thinking.facts, constrains(options)),
        facts={
            "kind": "vlm" if takes_images(config) else "causal_lm",
            "model_type": config.get("model_type"),
            "path": checkpoint.source if checkpoint.local else None,
            "gguf_file": checkpoint.gguf_file,
        },
    )


#: how the cache key and the record name decoding under a schema (`models.local.hf_schema`)
CONSTRAINT = "llguidance JSON-schema grammar"


def constrains(options: ModelOptions) -> bool:
    """Whether the model decodes under a judge's schema: llguidance is installed (looked up,
    not imported) and the model's `structured_output` is not `prompt`."""
    return (
        options.structured_output != "prompt" and importlib.util.find_spec("llguidance") is not None
    )


def hf_cache_facts(thinking: Any, constrained: bool) -> dict[str, Any]:
    """What enters every key of an hf: model's calls besides the request: its thinking
    switch, and the grammar when its replies are decoded under one (the same request
    answers differently with it)."""
    facts: dict[str, Any] = {"thinking": thinking} if thinking else {}
    if constrained:
        facts["decoding"] = CONSTRAINT
    return facts


def _config_json(spec: ModelSpec, checkpoint: Checkpoint) -> dict[str, Any] | None:
    """The checkpoint's config.json, read without transformers; None when not on this machine.
    A GGUF file's is its architecture, from its header (transformers loads no vision tower
    from GGUF, so it is a causal LM)."""
    if checkpoint.gguf_file is not None:
        return {
            "model_type": _gguf_architecture(spec, f"{checkpoint.source}/{checkpoint.gguf_file}")
        }
    if checkpoint.local:
        path: str | None = f"{checkpoint.source}/config.json"
    else:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(
            checkpoint.source, "config.json", revision=checkpoint.revision
        )
        path = found if isinstance(found, str) else None
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            loaded = json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelSpecError(f"{spec}: cannot read {path}: {exc}") from None
    return loaded if isinstance(loaded, dict) else None


def _gguf_architecture(spec: ModelSpec, path: str) -> str:
    """`general.architecture` of a GGUF file (memory-mapped: the weights are not read)."""
    from gguf import GGUFReader

    try:
        field = GGUFReader(path).fields.get("general.architecture")
        if field is None:
            raise ValueError("no general.architecture in its header")
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    except (OSError, ValueError) as exc:
        raise ModelSpecError(f"{spec}: cannot read {path} as GGUF: {exc}") from None


__all__ = [
    "CONSTRAINT",
    "CPU_BATCH",
    "PARAMS",
    "ThinkingSetup",
    "constrains",
    "hf_cache_facts",
    "plan",
    "takes_images",
    "thinking_setup",
]
