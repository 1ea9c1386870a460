"""Model spec strings, parsed in one place: `<backend>:<id>`.

Parsing never imports a backend library; building one does (see `models.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass

from titjudge.errors import ModelSpecError, did_you_mean

#: backend prefix -> what it is; the registry builds each lazily.
BACKENDS: dict[str, str] = {
    "litellm": "any litellm provider, e.g. litellm:gemini/gemini-2.5-pro, litellm:openai/gpt-4o",
    "hf": "local transformers VLM or causal LM, e.g. hf:Qwen/Qwen2.5-VL-7B-Instruct or hf:/path",
    "embed": "local text-embedding model, e.g. embed:Qwen/Qwen3-Embedding-8B or embed:/path",
    "clip": "local CLIP-family model scoring prompt and image, e.g. clip:openai/clip-vit-large-patch14 or clip:yuvalkirstain/PickScore_v1",
    "replay": "descriptions read from a JSONL file instead of a model, e.g. replay:descriptions.jsonl",
}


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec: which backend, and the id that backend understands."""

    backend: str
    model_id: str

    def __str__(self) -> str:
        return f"{self.backend}:{self.model_id}"

    @property
    def short_name(self) -> str:
        """A readable label: the last path component of the id."""
        return self.model_id.rstrip("/").rsplit("/", 1)[-1] or self.model_id


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse `<backend>:<id>`; raise `ModelSpecError` naming the problem otherwise."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModelSpecError(
            "model spec is empty; expected '<backend>:<id>', e.g. 'litellm:openai/gpt-4o'"
        )
    spec = spec.strip()
    backend, sep, model_id = spec.partition(":")
    if not sep:
        raise ModelSpecError(
            f"model spec {spec!r} has no backend prefix; expected '<backend>:<id>' with backend one of "
            f"{', '.join(BACKENDS)} (e.g. 'litellm:{spec}')"
        )
    if backend not in BACKENDS:
        raise ModelSpecError(
            f"unknown model backend {backend!r} in {spec!r}{did_you_mean(backend, BACKENDS)}; "
            f"known backends: {', '.join(BACKENDS)}"
        )
    if not model_id.strip():
        raise ModelSpecError(f"model spec {spec!r} has no model id after '{backend}:'")
    return ModelSpec(backend, model_id.strip())
