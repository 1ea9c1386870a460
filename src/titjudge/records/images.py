"""Sizing images before they are sent: the loader's side bound and `max_image_pixels`.

Two bounds, applied in this order. Every image the loader reads is at most MAX_SIDE pixels
on its longer side (titjudge.data.images downscales larger ones with `downscale`, right
after decoding, and re-encodes them with `encode`). A model may bound the pixel count
further with `max_image_pixels` (`fit_image`, in the call layer), which resizes with the
same `downscale` and `encode`, so an image shrunk by either bound is resampled and
re-encoded the same way; a `max_image_pixels` above MAX_SIDE squared changes nothing.

Why a pixel bound: a Qwen2.5-VL server spends one token per 28x28 pixels (a 2048x2048 image
is ~5.3k tokens of context), and Gemini takes at most 20 MB of inline data per request. The
resized image is deterministic for given bytes and bound, and it is what the cache key
hashes, so changing a bound asks again and keeping it reuses every answer.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import PIL
from PIL import Image

from titjudge.records.image_input import ImageInput

#: the longest side of any image the loader hands on; larger images are downscaled to it
MAX_SIDE = 4096

#: re-encoding per source type: photos stay JPEG (PNG would be several times larger)
_FORMATS = {"image/jpeg": ("JPEG", {"quality": 95}), "image/webp": ("WEBP", {"quality": 95})}
_MIMES = {"JPEG": "image/jpeg", "WEBP": "image/webp", "PNG": "image/png"}


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


def side_bounded_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """The largest size with the same aspect ratio and no side longer than `max_side`."""
    longest = max(width, height)
    if longest <= max_side:
        return width, height
    scale = max_side / longest
    return max(1, min(max_side, round(width * scale))), max(1, min(max_side, round(height * scale)))


def draft(source: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Ask a JPEG `source` (opened, not yet decoded) to decode at 1/2, 1/4 or 1/8 scale when
    that still covers `size` (`Image.draft`); `source.size` is then what decoding will
    hold. Other formats are left as they are."""
    source.draft("RGB", size)
    return source


def downscale(source: Image.Image, size: tuple[int, int]) -> Image.Image:
    """`source` (opened, not yet decoded) resized to `size` (Lanczos), holding as little at
    once as Pillow allows: a JPEG decodes at a reduced scale (`draft`); other formats decode
    at full size, and `source` is closed as soon as the resized copy exists, which frees that
    full-size decode. Bilevel and palette images are converted first, since Pillow resizes
    them by nearest neighbour."""
    image: Image.Image = draft(source, size)
    if image.mode == "1":
        image = image.convert("L")
    elif image.mode == "P":
        image = image.convert("RGBA" if image.has_transparency_data else "RGB")
    resized = image.resize(size, Image.Resampling.LANCZOS)
    del image
    source.close()
    return resized


def encode(image: Image.Image, source_mime: str, path: Path | None) -> ImageInput:
    """A resized `image` as bytes: JPEG and WebP sources stay JPEG and WebP (quality 95),
    anything else, and a JPEG with an alpha channel, becomes PNG."""
    fmt, options = _FORMATS.get(source_mime, ("PNG", {}))
    if fmt == "JPEG" and image.mode not in {"RGB", "L"}:
        fmt, options = "PNG", {}
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return ImageInput(data=buffer.getvalue(), mime=_MIMES[fmt], path=path, size=image.size)


def fit_image(image: ImageInput, max_pixels: int) -> ImageInput:
    """`image` itself when within the bound, else a downscaled copy (Lanczos)."""
    with Image.open(io.BytesIO(image.data)) as source:
        width, height = source.size
        if width * height <= max_pixels:
            return image
        resized = downscale(source, fitted_size(width, height, max_pixels))
    resized = resized.convert("RGBA" if "A" in resized.getbands() else "RGB")
    return encode(resized, image.mime, image.path)


#: re-encoding to fit a byte limit (`fit_bytes`): JPEG, or WebP where there is an alpha channel
#: (JPEG has none), at quality 90 (Pillow's scale 1-95; above 95 Pillow's docs advise against)
FIT_QUALITY = 90
#: each downscale aims this far under the limit, so that one more step rarely follows
_FIT_MARGIN = 0.92


def sent_bytes(size: int) -> int:
    """What `size` bytes take in a request body: their base64 text."""
    return 4 * math.ceil(size / 3)


def fit_bytes(image: ImageInput, max_bytes: int, why: str = "") -> tuple[ImageInput, str | None]:
    """`image` itself when its base64 fits in `max_bytes`, else a re-encoded copy (JPEG, or
    WebP with alpha, quality FIT_QUALITY), downscaled (Lanczos) until it fits, and a note of
    what was done, e.g. 'image/png 2048x2048 12583138 B -> image/jpeg q90 1290x1290 3794551 B
    (base64 5059404 B) to fit anthropic: 5242880 bytes per image'. Deterministic for given
    bytes and limit; ValueError when even a 16-pixel side does not fit."""
    if sent_bytes(len(image.data)) <= max_bytes:
        return image, None
    with Image.open(io.BytesIO(image.data)) as source:
        source.load()
        alpha = "A" in source.getbands() or source.mode == "P" and source.has_transparency_data
        picture = source.convert("RGBA" if alpha else "RGB")
    fmt, mime = ("WEBP", "image/webp") if alpha else ("JPEG", "image/jpeg")
    width, height = picture.size
    size = picture.size
    while True:
        resized = (
            picture if size == picture.size else picture.resize(size, Image.Resampling.LANCZOS)
        )
        buffer = io.BytesIO()
        resized.save(buffer, format=fmt, quality=FIT_QUALITY)
        data = buffer.getvalue()
        if sent_bytes(len(data)) <= max_bytes:
            break
        if min(size) <= 16:
            raise ValueError(f"{image.path or 'image'}: no size fits in {max_bytes} bytes")
        scale = math.sqrt(max_bytes / sent_bytes(len(data))) * _FIT_MARGIN
        size = (max(16, math.floor(size[0] * scale)), max(16, math.floor(size[1] * scale)))
    fitted = ImageInput(data=data, mime=mime, path=image.path, size=size)
    note = (
        f"{image.mime} {width}x{height} {len(image.data)} B -> {mime} q{FIT_QUALITY} "
        f"{size[0]}x{size[1]} {len(data)} B (base64 {sent_bytes(len(data))} B)"
        + (f" to fit {why}" if why else f" to fit {max_bytes} bytes")
    )
    return fitted, note


def fit_within(
    image: ImageInput, max_pixels: int, max_bytes: int | None, why: str = ""
) -> tuple[ImageInput, str | None]:
    """`image` within `max_pixels` (`fit_image`), then within `max_bytes` of base64
    (`fit_bytes`; None: no byte bound), and a note of what the byte fit did (None: nothing)."""
    fitted = fit_image(image, max_pixels)
    if max_bytes is None:
        return fitted, None
    return fit_bytes(fitted, max_bytes, why)


#: Pillow's version: a resized or re-encoded image's bytes may differ between versions, so
#: a remembered hash of one (`entry`) is keyed on it
PIL_VERSION = PIL.__version__


def entry(sha256: str, mime: str, size: tuple[int, int], note: str | None = None) -> dict[str, Any]:
    """What is remembered of an image made from a file (its hash, type and pixel size, and
    what fitting it did), so that a re-run keys it without reading it (`data.image_digests`,
    `models.calls.text_client`)."""
    found: dict[str, Any] = {"sha256": sha256, "mime": mime, "width": size[0], "height": size[1]}
    if note is not None:
        found["note"] = note
    return found


def read_entry(found: Any) -> tuple[str, str, tuple[int, int]] | None:
    """(sha256, mime, (width, height)) from a remembered entry; None when it is not one."""
    if not isinstance(found, dict):
        return None
    sha, mime, width, height = (found.get(k) for k in ("sha256", "mime", "width", "height"))
    if not (isinstance(sha, str) and isinstance(mime, str)):
        return None
    if not (isinstance(width, int) and isinstance(height, int)):
        return None
    return sha, mime, (width, height)


__all__ = [
    "MAX_SIDE",
    "PIL_VERSION",
    "downscale",
    "draft",
    "encode",
    "entry",
    "FIT_QUALITY",
    "fit_bytes",
    "fit_image",
    "fit_within",
    "fitted_size",
    "read_entry",
    "sent_bytes",
    "side_bounded_size",
]
