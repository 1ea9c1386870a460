"""What an `embed:` model's config means, worked out without torch or the weights.

Its parameters are checked, its checkpoint found (a folder holding config.json, or a hub id)
and its libraries looked for, so a mistyped path or a missing extra is still refused before
the run; the weights load on the first embedding not in the cache (`models.core.lazy`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from titjudge.errors import MissingDependencyError, ModelSpecError, install_hint
from titjudge.models.core.lazy import BackendPlan
from titjudge.models.core.options import ModelOptions
from titjudge.models.local.common import Checkpoint, check_params, resolve_checkpoint
from titjudge.records.spec import ModelSpec

PARAMS: dict[str, type | tuple[type, ...]] = {
    "max_length": int,
    "revision": str,
    "trust_remote_code": bool,
    "max_wait_ms": (int, float),
}
#: texts per model batch when the config gives no batch_size (CPU; an accelerator doubles it)
CPU_BATCH = 16
#: in-flight texts per batch: a window of several batches lets the batcher sort by length
CONCURRENCY_PER_BATCH = 4


def embedding_checkpoint(spec: ModelSpec, revision: str | None) -> Checkpoint:
    """Where an `embed:` model's weights are: a folder or a hub id; a .gguf file is refused."""
    checkpoint = resolve_checkpoint(spec, revision)
    if checkpoint.gguf_file is not None:
        raise ModelSpecError(
            f"{spec}: embed: loads a model folder or a hub id, not a .gguf file (hf: reads "
            "GGUF text models; a served embedding model: litellm: with api_base)"
        )
    return checkpoint


#: a `clip:` model's params (`models.local.clip`)
CLIP_PARAMS: dict[str, type | tuple[type, ...]] = {
    "processor": str,
    "revision": str,
    "max_wait_ms": (int, float),
}


def plan(spec: ModelSpec, options: ModelOptions) -> BackendPlan:
    """The lazy backend's plan (registry entry point)."""
    return _plan(spec, options, PARAMS)


def clip_plan(spec: ModelSpec, options: ModelOptions) -> BackendPlan:
    """A `clip:` model's lazy plan: its params, its checkpoint (and `processor`'s) found."""
    plan = _plan(spec, options, CLIP_PARAMS)
    processor = options.params.get("processor")
    if processor and not Path(str(processor)).expanduser().is_dir():
        embedding_checkpoint(ModelSpec("clip", str(processor)), None)  # a hub id, or no folder
    return plan


def _plan(
    spec: ModelSpec, options: ModelOptions, allowed: dict[str, type | tuple[type, ...]]
) -> BackendPlan:
    params = check_params(spec, options.params, allowed)
    checkpoint = embedding_checkpoint(spec, params.get("revision"))
    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(
                f"the '{spec.backend}:' backend needs {module!r}, which is not installed; install it "
                f"with: {install_hint('local')}"
            )
    batch = options.batch_size or CPU_BATCH
    facts = {"path": checkpoint.source if checkpoint.local else None, "batch_size": batch}
    return BackendPlan(default_concurrency=CONCURRENCY_PER_BATCH * batch, facts=facts)


__all__ = ["CLIP_PARAMS", "PARAMS", "clip_plan", "embedding_checkpoint", "plan"]
