"""Read images for a model: verify they decode, bound their size and the memory decoding takes.

PNG, JPEG, WebP and GIF in RGB/RGBA/L mode, at most MAX_SIDE pixels on a side, are sent
byte-for-byte (their hash keys the cache). An image longer than MAX_SIDE is downscaled to
it before anything else is done with it, holding as little as Pillow allows (a JPEG decodes
at 1/2, 1/4 or 1/8 scale; other formats decode once at full size and only the resized copy
is kept), then re-encoded as `titjudge.records.images.encode` does (JPEG stays JPEG, WebP
stays WebP, the rest PNG); its cache key is the hash of those new bytes. Anything else (CMYK
JPEG, 16-bit PNG, TIFF, palette images...) becomes an 8-bit RGB(A) or greyscale PNG, so
every backend receives something it can decode. A missing, truncated or corrupt file, or an
image over MAX_PIXELS, is a DataError naming the file; the run records it as a failed item.
Every read of an image file goes through `titjudge.user_files`: only a regular file is opened
(a FIFO, a device or a folder is that item's DataError, never a blocked open), and a read that
has not finished within `user_files.READ_TIMEOUT` (a hung network mount) is one too, so a run
always ends.

Pillow's decompression-bomb guard is set to MAX_PIXELS here (for every Pillow user in the
process), and before each image is opened it is set again and its warning (which Pillow gives
between that and twice it) is turned into the error it warns of: the guard and warning
filters are process-wide, and a caller or a test harness may reset them. So the loader refuses an oversized image with one line and
no warning reaches the user.

A run loads through one `ImageLoader`, shared by all its workers: at most `concurrency`
images are decoded at once, and the pixels being decoded stay within a budget. The audit
page's thumbnails go through the same loader (`ImageLoader.thumbnail`, `load_thumbnail`):
the same limits and the same errors, so any image a run accepted gets a thumbnail.
"""

from __future__ import annotations

import asyncio
import io
import os
import warnings
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

from titjudge.data.image_digests import MetaStore, identity
from titjudge.errors import DataError
from titjudge.records.image_input import ImageInput
from titjudge.records.images import (
    MAX_SIDE,
    downscale,
    draft,
    encode,
    entry,
    read_entry,
    side_bounded_size,
)
from titjudge.user_files import read_user_file, with_user_file

#: the largest image the loader reads, 40000x40000; larger ones are refused undecoded
MAX_PIXELS = 40_000 * 40_000
#: pixels a run's loads hold at once (`decode_pixels`; 4 bytes each in RGB(A): about
#: 600 MB); an image that needs more is loaded alone
PIXEL_BUDGET = 150_000_000

#: Pillow's allocation block (16 MiB by default): blocks this large are above glibc's
#: mmap threshold, so a freed decode goes back to the OS at once instead of staying in the
#: malloc arena of the thread that decoded it (Pillow's "Block allocator" settings)
BLOCK_SIZE = 64 * 2**20

Image.MAX_IMAGE_PIXELS = MAX_PIXELS
if "PILLOW_BLOCK_SIZE" not in os.environ:
    Image.core.set_block_size(BLOCK_SIZE)
#: the warnings filter that makes Pillow's bomb warning an error, as `warnings` stores it
_BOMB_AS_ERROR = ("error", None, Image.DecompressionBombWarning, None, 0)

_PASSTHROUGH = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
_MODES = {"RGB", "RGBA", "L"}
_BOMB = (Image.DecompressionBombError, Image.DecompressionBombWarning)
_TOO_LARGE = f"image over the {MAX_PIXELS // 10**6} megapixel limit (40000x40000); downscale it"


def _refuse_bombs() -> None:
    """Pillow's guard at MAX_PIXELS, and the filter that turns its bomb warning into an error
    first, unless they are (a caller or a test harness may have reset either)."""
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    if warnings.filters[:1] != [_BOMB_AS_ERROR]:
        warnings.filterwarnings("error", category=Image.DecompressionBombWarning)


@contextmanager
def _opened(path: Path) -> Iterator[tuple[bytes, Image.Image]]:
    """The bytes of the image at `path` and the image opened (not decoded) from them under
    the loader's limits; whatever goes wrong reading or decoding it in the block is a
    DataError naming the file."""
    _refuse_bombs()
    data = read_user_file(path, "image")  # a regular file only, read within READ_TIMEOUT
    if not data:
        raise DataError(f"{path}: image file is empty")
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:  # Pillow's own guard, should it have been reset
                raise DataError(f"{path}: {_TOO_LARGE}")
            yield data, image
    except _BOMB:
        raise DataError(f"{path}: {_TOO_LARGE}") from None
    except UnidentifiedImageError as exc:
        raise DataError(f"{path}: not a readable image ({exc.__class__.__name__})") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise DataError(f"{path}: corrupt or truncated image ({exc})") from None


def load_image(path: str | Path) -> ImageInput:
    """Read, decode and normalise one image (blocking; a run goes through `ImageLoader`)."""
    path = Path(path)
    with _opened(path) as (data, image):
        return _decoded(path, data, image)


def load_thumbnail(path: str | Path, side: int) -> Image.Image:
    """The image at `path` as RGB, at most `side` pixels on a side, read under the same limits
    as `load_image` (blocking; DataError naming the file when it cannot be read). A JPEG
    decodes at a reduced scale; other formats decode once and only the small copy is kept."""
    with _opened(Path(path)) as (_, image):
        image.draft("RGB", (side, side))
        image.thumbnail((side, side))
        return image.convert("RGB")


def decode_pixels(path: str | Path) -> int:
    """Pixels loading `path` holds at once, read from the header alone: the decoded image (a
    JPEG's at its reduced draft scale) and, when it is downscaled, Pillow's intermediate of
    the resize (target width x decoded height) and the result. 0 when the file does not
    open, so that `load_image` says why."""
    try:
        return header_pixels(path)
    except DataError:
        return 0


def header_pixels(path: str | Path) -> int:
    """`decode_pixels`, but a path that is no regular file, or whose header is not read within
    `READ_TIMEOUT`, is the DataError `load_image` would raise (0: the header does not decode)."""
    _refuse_bombs()
    return with_user_file(path, _pixels, "image")


def _pixels(handle: BinaryIO) -> int:
    try:
        with Image.open(handle) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                return 0
            target = side_bounded_size(width, height, MAX_SIDE)
            if target == (width, height):
                return width * height
            width, height = draft(image, target).size
            return width * height + target[0] * height + target[0] * target[1]
    except (*_BOMB, UnidentifiedImageError, OSError, SyntaxError, ValueError):
        return 0


def _decoded(path: Path, data: bytes, image: Image.Image) -> ImageInput:
    width, height = image.size
    fmt, mime = image.format, _PASSTHROUGH.get(image.format or "", "image/png")
    target = side_bounded_size(width, height, MAX_SIDE)
    if target != (width, height):
        return encode(_normalised(downscale(image, target)), mime, path)
    image.load()  # decodes fully: catches truncated files that open() accepts
    if fmt in _PASSTHROUGH and image.mode in _MODES:
        return ImageInput(data=data, mime=mime, path=path, size=(width, height))
    return encode(_normalised(image), "image/png", path)


def _normalised(image: Image.Image) -> Image.Image:
    """An 8-bit RGB, RGBA or greyscale image of the same pixels."""
    if image.mode.startswith("I;16"):
        image = image.convert("I")
    if image.mode == "I":  # 16-bit greyscale: keep the high byte
        image = image.point(lambda v: v * (1 / 256)).convert("L")
    if image.mode not in _MODES:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    return image


class ImageLoader:
    """Loads a run's images: at most `concurrency` decoded at once, and at most
    `pixel_budget` decoded pixels in flight (an image over the budget waits until nothing
    else is decoding, then decodes alone). Waiting loads are served first come, first
    served. One loader is shared by all workers of a run; decoding runs in a thread.

    With `known` (the run's cache), what each load learnt about a file is remembered there
    (`data.image_digests`), and a later load of the same unchanged file reads nothing."""

    def __init__(
        self, concurrency: int, pixel_budget: int = PIXEL_BUDGET, known: MetaStore | None = None
    ):
        if concurrency < 1 or pixel_budget < 1:
            raise ValueError("an image loader needs a concurrency and a pixel budget of at least 1")
        self.concurrency, self.pixel_budget = concurrency, pixel_budget
        self.known = known
        self._decoding, self._pixels = 0, 0
        self._waiting: deque[tuple[int, asyncio.Future[None]]] = deque()

    async def load(self, path: str | Path) -> ImageInput:
        """The image at `path`, as `load_image` reads it; raises DataError. A file loaded by
        an earlier run and unchanged since comes back deferred (`peek`), unread."""
        before = await asyncio.to_thread(identity, path) if self.known is not None else None
        found = self._remembered(path, before)
        if found is not None:
            return found
        image = await self._read(path)
        unchanged = before is not None and await asyncio.to_thread(identity, path) == before
        if self.known is not None and before is not None and unchanged:
            self.known.set_meta(before, entry(image.sha256, image.mime, image.size))
        return image

    def peek(self, path: str | Path) -> ImageInput | None:
        """The image at `path` as a deferred image when an earlier load of the same unchanged
        file is remembered, else None. Its bytes are read (and checked against the remembered
        hash) only when a call must send them."""
        return self._remembered(path, identity(path) if self.known is not None else None)

    def _remembered(self, path: str | Path, key: str | None) -> ImageInput | None:
        """`peek` for the file whose identity is `key`."""
        found = read_entry(self.known.get_meta(key)) if self.known is not None and key else None
        if found is None:
            return None
        sha256, mime, size = found

        async def fetch() -> ImageInput:
            image = await self._read(path)
            if image.sha256 != sha256:
                raise DataError(f"{path}: the image file changed while the run used it; run again")
            return image

        return ImageInput.deferred(sha256, mime, Path(path), size, fetch)

    async def thumbnail(self, path: str | Path, side: int) -> Image.Image:
        """`load_thumbnail` within this loader's concurrency and pixel budget (the audit
        page's thumbnails); raises DataError."""
        pixels = await asyncio.to_thread(header_pixels, path)
        async with self._slot(pixels):
            return await asyncio.to_thread(load_thumbnail, path, side)

    async def _read(self, path: str | Path) -> ImageInput:
        pixels = await asyncio.to_thread(header_pixels, path)
        async with self._slot(pixels):
            return await asyncio.to_thread(load_image, path)

    def _fits(self, pixels: int) -> bool:
        if self._decoding >= self.concurrency:
            return False
        return self._decoding == 0 or self._pixels + pixels <= self.pixel_budget

    def _take(self, pixels: int) -> None:
        self._decoding += 1
        self._pixels += pixels

    def _release(self, pixels: int) -> None:
        self._decoding -= 1
        self._pixels -= pixels
        self._wake()

    def _wake(self) -> None:
        while self._waiting and self._fits(self._waiting[0][0]):
            cost, waiter = self._waiting.popleft()
            if not waiter.cancelled():  # one cancelled but not yet out of the queue is skipped
                self._take(cost)
                waiter.set_result(None)

    @asynccontextmanager
    async def _slot(self, pixels: int) -> AsyncIterator[None]:
        if not self._waiting and self._fits(pixels):
            self._take(pixels)
        else:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append((pixels, waiter))
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.cancelled():
                    if (pixels, waiter) in self._waiting:
                        self._waiting.remove((pixels, waiter))
                        self._wake()
                else:  # granted, then cancelled before it ran
                    self._release(pixels)
                raise
        try:
            yield
        finally:
            self._release(pixels)


__all__ = [
    "MAX_PIXELS",
    "PIXEL_BUDGET",
    "ImageLoader",
    "decode_pixels",
    "header_pixels",
    "load_image",
    "load_thumbnail",
]
