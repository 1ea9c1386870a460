"""Images fitted before a call keys and sends them: downscaled to `max_image_pixels`, and
re-encoded and downscaled until they fit the provider's byte limit (`Backend.image_limit`).

What fitting made is remembered in the cache dir (its hash, size and note, `records.images`),
so a re-run keys a deferred image (one it has not read) without reading and fitting it, and
a cache probe that may not read images (`CacheProbe.fits` False) misses instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from titjudge.cache.store import CallCache
from titjudge.errors import DataError
from titjudge.models.core.base import GenerateRequest, TextBackend
from titjudge.models.core.clients import SEND, CallMode
from titjudge.records.image_input import ImageInput
from titjudge.records.images import (
    MAX_SIDE,
    PIL_VERSION,
    entry,
    fit_within,
    read_entry,
    sent_bytes,
)

#: fitted images remembered per client (by image hash and bounds), oldest dropped first
MEMO_SIZE = 256


class ImageFitter:
    """Fits one text client's images (its backend's byte limit, its `max_image_pixels`)."""

    def __init__(self, backend: TextBackend, cache: CallCache, max_image_pixels: int | None):
        self.backend = backend
        self.cache = cache
        self.max_image_pixels = max_image_pixels
        self._memo: dict[str, tuple[ImageInput, str | None]] = {}

    async def fit(
        self, request: GenerateRequest, *, probe: CallMode
    ) -> tuple[GenerateRequest, list[str]]:
        """Images above `max_image_pixels` downscaled, and images over the provider's byte
        limit (`Backend.image_limit`, a per-request limit divided among the request's images)
        re-encoded and downscaled until they fit; the fitted bytes are what the key hashes.
        Also a note of each change, for the call's record."""
        limit = self.backend.image_limit() if request.images else None
        budget = limit.budget(len(request.images)) if limit is not None else None
        if (self.max_image_pixels is None and budget is None) or not request.images:
            return request, []
        why = limit.text() if limit is not None else ""
        done = [await self._fitted(image, budget, why, probe=probe) for image in request.images]
        notes = [note for _, note in done if note]
        fitted = tuple(image for image, _ in done)
        if all(a is b for a, b in zip(fitted, request.images, strict=True)):
            return request, notes
        return dataclasses.replace(request, images=fitted), notes

    async def _fitted(
        self, image: ImageInput, budget: int | None, why: str, *, probe: CallMode
    ) -> tuple[ImageInput, str | None]:
        """One fit per image and bound, however many roles send it (describer, lmm,
        lmm_yes). What fitting made is remembered in the cache dir (its hash, size and note),
        so a re-run keys a deferred image (one it has not read) without reading and fitting
        it; its bytes are made when sent."""
        max_pixels = self.max_image_pixels or MAX_SIDE * MAX_SIDE
        if budget is None and image.size[0] * image.size[1] <= max_pixels:
            return image, None
        memo = f"{image.sha256}:{max_pixels}:{budget}"
        found = self._memo.get(memo)
        if found is None:
            fact = f"image-fit:{image.sha256}:{max_pixels}:{PIL_VERSION}"
            if budget is not None:  # a byte bound: its own fact (pixel-only facts stay valid)
                fact = f"image-fit:{image.sha256}:{max_pixels}:{budget}:{PIL_VERSION}"
            remembered = self.cache.get_meta(fact)
            if _fits_as_is(remembered, image):
                return image, None
            if self._fits_in_bytes(image, budget):  # no pixel bound, and its bytes fit
                self.cache.set_meta(fact, {"sha256": image.sha256, "fits": True})
                self._memo[memo] = (image, None)
                return image, None
            known = read_entry(remembered)
            if known is None and not image.loaded and probe is not SEND and not probe.fits:
                probe.missed = True  # answered from the cache only: nothing is read to key it
                return image, None
            if known is not None and not image.loaded:
                sha256, mime, size = known
                note = remembered.get("note") if isinstance(remembered, dict) else None

                async def fetch() -> ImageInput:
                    made, _ = await asyncio.to_thread(
                        fit_within, await image.load(), max_pixels, budget, why
                    )
                    if made.sha256 != sha256:
                        raise DataError(
                            f"{image.path}: resized differently than remembered; run again"
                        )
                    return made

                made = image if sha256 == image.sha256 else None
                found = (made or ImageInput.deferred(sha256, mime, image.path, size, fetch), note)
            else:
                found = await asyncio.to_thread(
                    fit_within, await image.load(), max_pixels, budget, why
                )
                made_image, note = found
                self.cache.set_meta(
                    fact, entry(made_image.sha256, made_image.mime, made_image.size, note)
                )
            if len(self._memo) >= MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
            self._memo[memo] = found
        return found

    def _fits_in_bytes(self, image: ImageInput, budget: int | None) -> bool:
        """A loaded image sent as it is: no pixel bound is set and its base64 is within
        `budget` (its bytes are not even decoded)."""
        if self.max_image_pixels is not None or budget is None or not image.loaded:
            return False
        return sent_bytes(len(image.data)) <= budget


def _fits_as_is(remembered: Any, image: ImageInput) -> bool:
    """Whether the cache dir remembers `image` as sent unchanged under a byte bound."""
    return (
        isinstance(remembered, dict)
        and remembered.get("fits") is True
        and remembered.get("sha256") == image.sha256
    )


__all__ = ["MEMO_SIZE", "ImageFitter"]
