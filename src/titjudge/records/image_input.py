"""The image a model is sent: bytes plus what is needed to send them (`ImageInput`). Kept low:
the data loader builds it, the models send it."""

from __future__ import annotations

import asyncio
import hashlib
import io
import mimetypes
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from titjudge.user_files import read_user_file


class ImageInput:
    """Image bytes plus what is needed to send them; the cache keys on the content hash.

    A deferred image (`deferred`) knows its hash, type and pixel size, read from an earlier
    load of the same unchanged file, but not its bytes: a call answered from the cache never
    needs them, and `load()` reads them when one must really be sent. Its `data` is an error
    until then. A loaded image's `size` is read from its header when first asked for.
    """

    __slots__ = ("_data", "_fetch", "_loading", "_sha256", "_size", "mime", "path")

    def __init__(
        self,
        data: bytes,
        mime: str = "image/png",
        path: Path | None = None,
        *,
        size: tuple[int, int] | None = None,
    ):
        self._data: bytes | None = data
        self.mime = mime
        self.path = path
        self._sha256: str | None = None
        self._size = size
        self._fetch: Callable[[], Awaitable[ImageInput]] | None = None
        self._loading: asyncio.Future[None] | None = None

    @classmethod
    def deferred(
        cls,
        sha256: str,
        mime: str,
        path: Path | None,
        size: tuple[int, int],
        fetch: Callable[[], Awaitable[ImageInput]],
    ) -> ImageInput:
        """An image known by its hash, type and size, whose bytes `fetch` reads (and checks
        against `sha256`) on the first `load()`."""
        image = cls(b"", mime, path, size=size)
        image._data, image._sha256, image._fetch = None, sha256, fetch
        return image

    @classmethod
    def from_path(cls, path: str | Path) -> ImageInput:
        path = Path(path)
        mime = mimetypes.guess_type(path.name)[0] or "image/png"
        return cls(data=read_user_file(path, "image"), mime=mime, path=path)

    @property
    def loaded(self) -> bool:
        return self._data is not None

    @property
    def data(self) -> bytes:
        if self._data is None:
            raise RuntimeError(f"image {self.path or self.sha256[:12]} was sent before load()")
        return self._data

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            self._sha256 = hashlib.sha256(self.data).hexdigest()
        return self._sha256

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        if self._size is None:
            from PIL import Image

            with Image.open(io.BytesIO(self.data)) as opened:  # reads the header only
                self._size = opened.size
        return self._size

    async def load(self) -> ImageInput:
        """This image with its bytes: itself once they are read (a deferred image reads them
        once, then keeps them)."""
        if self._data is not None:
            return self
        if self._loading is not None:  # another call is reading it: one read for both
            await asyncio.shield(self._loading)
            return self
        assert self._fetch is not None
        self._loading = asyncio.get_running_loop().create_future()
        try:
            read = await self._fetch()
            self._data, self._size = read.data, read.size
            self._loading.set_result(None)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                self._loading.cancel()
            else:
                self._loading.set_exception(exc)
                self._loading.exception()  # the waiters re-raise it; none needed
            self._loading = None  # a later call may try again
            raise
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImageInput):
            return NotImplemented
        return (self.sha256, self.mime, self.path) == (other.sha256, other.mime, other.path)

    def __hash__(self) -> int:
        return hash((self.sha256, self.mime, self.path))

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "deferred"
        return f"ImageInput({self.mime}, {self.path}, sha256={self.sha256[:12]}, {state})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to a Ray actor) with its bytes; a deferred image must be loaded first."""
        return (_rebuilt, (self.data, self.mime, self.path, self._size))


def _rebuilt(data: bytes, mime: str, path: Path | None, size: tuple[int, int] | None) -> ImageInput:
    return ImageInput(data, mime, path, size=size)
