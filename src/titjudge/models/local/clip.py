"""The `clip:` backend: a CLIP-family checkpoint (transformers' `CLIPModel`: OpenAI CLIP,
PickScore, ...) embedding texts with its text tower and images with its vision tower into one
space, each vector L2-normalised (the EmbeddingBackend contract), so the cosine of a prompt's
vector and an image's is the model's own image-text similarity: `CLIPModel`'s
`logits_per_image` is that cosine times the checkpoint's `logit_scale`.

The text tower reads at most its `max_position_embeddings` tokens (77 for OpenAI CLIP and
PickScore): a longer prompt is truncated, as every CLIP score is; the run records the limit.
Texts and images are coalesced by one micro-batcher (a window holds one kind) and run in
batches of `batch_size`; an image that does not decode is that image's own error.

`params`: `processor` (the checkpoint whose tokenizer and image processor to use, when the
model's own folder has none: PickScore_v1 is used with
laion/CLIP-ViT-H-14-laion2B-s32B-b79K's), revision, max_wait_ms.
"""

from __future__ import annotations

import io
from collections.abc import Hashable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from titjudge.models.core.base import PermanentError
from titjudge.models.core.options import ModelOptions
from titjudge.models.local.common import (
    Checkpoint,
    check_params,
    load_config,
    quiet_third_party_bars,
    resolve_checkpoint,
)
from titjudge.models.local.embed_base import LocalEmbeddingBackend
from titjudge.models.local.embed_plan import CLIP_PARAMS
from titjudge.records.spec import ModelSpec

PARAMS = CLIP_PARAMS
CLIP = "clip"
#: the micro-batcher's key for a window of images (texts go under None)
IMAGES = "images"


class ClipBackend(LocalEmbeddingBackend):
    """Text and image towers of one CLIP-family checkpoint."""

    layout = CLIP

    def load_model(self, checkpoint: Checkpoint, config: Any, params: dict[str, Any]) -> None:
        from transformers import AutoProcessor, CLIPModel

        self.processor_source = checkpoint
        if params.get("processor"):
            self.processor_source = processor_checkpoint(params["processor"])
        try:
            self.model = CLIPModel.from_pretrained(
                checkpoint.source,
                dtype=self.dtype,
                device_map=str(self.device),
                **checkpoint.load_kwargs(),
            ).eval()
            self.processor = _load_processor(AutoProcessor, self.processor_source)
        except (OSError, ValueError, TypeError) as exc:
            raise self._load_error(exc) from None
        text_config = config.text_config
        self.max_length = int(text_config.max_position_embeddings)
        self.dimension = int(config.projection_dim)
        self.logit_scale = float(self.model.logit_scale.exp().item())

    def layout_facts(self) -> dict[str, Any]:
        source = self.processor_source
        return {
            "towers": "text and image, projected, L2-normalised",
            "logit_scale": round(self.logit_scale, 6),
            "processor": source.source if source is not self.checkpoint else None,
        }

    async def embed_images(self, images: list[bytes]) -> list[list[float] | BaseException]:
        if not images:
            return []
        import asyncio

        submitted = (self._batcher.submit(image, IMAGES) for image in images)  # type: ignore[arg-type]
        return list(await asyncio.gather(*submitted, return_exceptions=True))

    def _embed_window(self, key: Hashable, items: list[Any]) -> list[list[float] | BaseException]:
        """Worker thread: one window of texts, or of images, in batches of `batch_size`."""
        if key == IMAGES:
            return self._images(items)
        results: list[list[float] | BaseException] = []
        for start in range(0, len(items), self.batch_size):
            chunk = items[start : start + self.batch_size]
            encoded = self.processor(
                text=chunk,
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            )
            with torch.inference_mode():
                features = self.model.get_text_features(**encoded.to(self.device))
            results.extend(_unit_rows(features))
        return results

    def _images(self, images: list[bytes]) -> list[list[float] | BaseException]:
        from PIL import Image

        results: list[list[float] | BaseException | None] = [None] * len(images)
        decoded: list[tuple[int, Any]] = []
        for i, data in enumerate(images):
            try:
                with Image.open(io.BytesIO(data)) as opened:
                    decoded.append((i, opened.convert("RGB")))
            except Exception as exc:  # that image's own failure, never the window's
                results[i] = PermanentError(f"the image does not decode: {exc}")
        for start in range(0, len(decoded), self.batch_size):
            chunk = decoded[start : start + self.batch_size]
            pixels = self.processor(images=[image for _, image in chunk], return_tensors="pt")
            with torch.inference_mode():
                features = self.model.get_image_features(
                    pixel_values=pixels["pixel_values"].to(self.device, self.dtype)
                )
            for (i, _), vector in zip(chunk, _unit_rows(features), strict=True):
                results[i] = vector
        return [r if r is not None else RuntimeError("image was not embedded") for r in results]


def _unit_rows(features: Any) -> list[list[float]]:
    """The projected features (a tensor, or an output whose `pooler_output` holds them: the
    transformers 5 return type), as L2-normalised float rows."""
    tensor = features if isinstance(features, torch.Tensor) else features.pooler_output
    unit = torch.nn.functional.normalize(tensor.float(), dim=-1)
    return [[float(x) for x in row] for row in unit.cpu().tolist()]


def processor_checkpoint(source: str) -> Checkpoint:
    """Where the `processor` param's tokenizer and image processor are: a folder (it needs no
    weights or config.json), or a hub id."""
    path = Path(source).expanduser()
    if path.is_dir():
        return Checkpoint(str(path.resolve()), local=True)
    return resolve_checkpoint(ModelSpec(CLIP, source))


def _load_processor(auto: Any, checkpoint: Checkpoint) -> Any:
    """The tokenizer and image processor, from the local cache first for a hub id."""
    if not checkpoint.local:
        try:
            return auto.from_pretrained(
                checkpoint.source, **replace(checkpoint, local_files_only=True).load_kwargs()
            )
        except (OSError, ValueError):
            pass  # not cached: the hub below
    return auto.from_pretrained(checkpoint.source, **checkpoint.load_kwargs())


def build(spec: ModelSpec, options: ModelOptions) -> ClipBackend:
    """Registry entry point (`clip:`)."""
    params = check_params(spec, options.params, PARAMS)
    checkpoint = resolve_checkpoint(spec, params.get("revision"))
    quiet_third_party_bars()
    config, checkpoint = load_config(spec, checkpoint)
    if getattr(config, "model_type", None) != "clip":
        from titjudge.errors import ModelSpecError

        raise ModelSpecError(
            f"{spec}: clip: loads CLIPModel checkpoints; {checkpoint.source} is a "
            f"{getattr(config, 'model_type', 'model')!r} checkpoint"
        )
    return ClipBackend(spec, options, checkpoint, config, params)


__all__ = ["PARAMS", "ClipBackend", "build"]
