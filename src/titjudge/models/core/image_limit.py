"""How many bytes of image a provider takes (`ImageLimit`): per image, per request, or both.

The numbers live with the litellm layer (`models.litellm.image_limits`, one row per provider,
each citing its docs); a backend hands its row to the call layer (`Backend.image_limit`),
which re-encodes and downscales an image until it fits (`records.images.fit_bytes`) before
keying and sending it. Sizes count the image as it travels: base64 text in a JSON body, 4/3
of the file's bytes. Where a provider does not say whether its figure is the file or its
base64, counting the base64 is the stricter reading.
"""

from __future__ import annotations

from dataclasses import dataclass

#: of a per-request limit, the share images may take (the rest: prompt, template, JSON framing)
REQUEST_SHARE = 0.9


@dataclass(frozen=True)
class ImageLimit:
    """One provider's documented byte limits on images (base64 bytes; None: none documented)."""

    provider: str
    per_image: int | None = None
    per_request: int | None = None
    #: where the numbers come from (URLs), for the record and the error text
    source: str = ""

    def budget(self, images: int) -> int | None:
        """The most base64 bytes each of `images` images may take in one request: the
        per-image limit, and a per-request limit divided among them; None when neither."""
        caps = [self.per_image] if self.per_image else []
        if self.per_request and images > 0:
            caps.append(int(self.per_request * REQUEST_SHARE) // images)
        return min(caps) if caps else None

    def text(self) -> str:
        """e.g. 'anthropic: 5242880 bytes per image'."""
        parts = []
        if self.per_image:
            parts.append(f"{self.per_image} bytes per image")
        if self.per_request:
            parts.append(f"{self.per_request} bytes per request")
        return f"{self.provider}: {', '.join(parts) or 'no byte limit'}"


__all__ = ["REQUEST_SHARE", "ImageLimit"]
