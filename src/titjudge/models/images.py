"""Bounding an image's pixels before it is sent (`max_image_pixels`).

Why a bound: a Qwen2.5-VL server spends one token per 28x28 pixels (a 2048x2048 image is
~5.3k tokens of context), and Gemini takes at most 20 MB of inline data per request. The
resized image is deterministic for given bytes and bound, and it is what the cache key
hashes, so changing the bound asks again and keeping it reuses every answer.
"""

from __future__ import annotations

import io
import math

from PIL import Image

from titjudge.models.base import ImageInput

#: re-encoding per source type: photos stay JPEG (PNG would be several times larger)
_FORMATS = {"image/jpeg": ("JPEG", {"quality": 95}), "image/webp": ("WEBP", {"quality": 95})}


def fitted_size(width: int, height: int, max_pixels: int) -> tuple[int, int]:
    """The largest size with the same aspect ratio and at most `max_pixels` pixels."""
    if width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    new_w, new_h = max(1, math.floor(width * scale)), max(1, math.floor(height * scale))
    while new_w * new_h > max_pixels:  # floor rounding can leave one row too many
        if new_w >= new_h:
            new_w -= 1
        else:
            new_h -= 1
    return new_w, new_h


def fit_image(image: ImageInput, max_pixels: int) -> ImageInput:
    """`image` itself when within the bound, else a downscaled copy (Lanczos)."""
    with Image.open(io.BytesIO(image.data)) as source:
        width, height = source.size
        if width * height <= max_pixels:
            return image
        size = fitted_size(width, height, max_pixels)
        source.draft("RGB", size)  # JPEG: decode at a reduced scale when that suffices
        resized = source.convert("RGBA" if "A" in source.getbands() else "RGB").resize(
            size, Image.Resampling.LANCZOS
        )
    fmt, options = _FORMATS.get(image.mime, ("PNG", {}))
    if fmt == "JPEG" and resized.mode == "RGBA":
        fmt, options = "PNG", {}
    buffer = io.BytesIO()
    resized.save(buffer, format=fmt, **options)
    mime = {"JPEG": "image/jpeg", "WEBP": "image/webp"}.get(fmt, "image/png")
    return ImageInput(data=buffer.getvalue(), mime=mime, path=image.path)


__all__ = ["fit_image", "fitted_size"]
