"""Read one image for a model: verify it decodes, normalise what providers reject.

PNG, JPEG, WebP and GIF in RGB/RGBA/L mode are sent byte-for-byte (their hash keys the
cache). Anything else (CMYK JPEG, 16-bit PNG, TIFF, palette images...) is converted to
an 8-bit RGB PNG, and images longer than MAX_SIDE on a side are downscaled, so every
backend receives something it can decode. A missing, truncated or corrupt file is a
DataError naming the file; the run records it as a failed item.
"""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from titjudge.errors import DataError
from titjudge.models.base import ImageInput

MAX_SIDE = 4096
_PASSTHROUGH = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
_MODES = {"RGB", "RGBA", "L"}


def load_image(path: str | Path) -> ImageInput:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: image file not found") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read image ({exc.strerror or exc})") from None
    if not data:
        raise DataError(f"{path}: image file is empty")
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()  # decodes fully: catches truncated files that open() accepts
            fmt, mode, size = image.format, image.mode, image.size
            if fmt in _PASSTHROUGH and mode in _MODES and max(size) <= MAX_SIDE:
                return ImageInput(data=data, mime=_PASSTHROUGH[fmt], path=path)
            return ImageInput(data=_to_png(image), mime="image/png", path=path)
    except (UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise DataError(f"{path}: not a readable image ({exc.__class__.__name__})") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise DataError(f"{path}: corrupt or truncated image ({exc})") from None


def _to_png(image: Image.Image) -> bytes:
    if image.mode.startswith("I;16"):
        image = image.convert("I")
    if image.mode == "I":  # 16-bit greyscale: keep the high byte
        image = image.point(lambda v: v * (1 / 256)).convert("L")
    if image.mode not in _MODES:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    if max(image.size) > MAX_SIDE:
        image = image.copy()
        image.thumbnail((MAX_SIDE // 2, MAX_SIDE // 2))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
