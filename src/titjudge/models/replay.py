"""`replay:<descriptions.jsonl>`: a describer that reads stored descriptions.

For re-judging old descriptions with new judges, and for the demo, where the synthetic
benchmark's generator wrote what it drew. Lines hold `image_sha256` (or `image`, a path
relative to the file) and `description`; a request is matched by its image's bytes.
Replays are free, so they are not cached.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from titjudge.errors import DataError, where
from titjudge.files import iter_jsonl, parse_record
from titjudge.models.base import (
    Capabilities,
    GenerateRequest,
    Generation,
    PermanentError,
    TextBackend,
)
from titjudge.models.options import ModelOptions
from titjudge.models.spec import ModelSpec


class ReplayBackend(TextBackend):
    cacheable = False
    default_concurrency = 1024
    capabilities = Capabilities(vision=True)

    def __init__(self, spec: ModelSpec, path: Path):
        super().__init__(spec)
        self.path = path
        self.by_hash = load_descriptions(path)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "replay_of": str(self.path),
            "descriptions": len(self.by_hash),
        }

    async def generate(self, request: GenerateRequest) -> Generation:
        if len(request.images) != 1:
            raise PermanentError(
                f"{self.spec}: replay answers describe requests with exactly one image; it cannot judge or "
                "score text, so use it only as the describer"
            )
        digest = request.images[0].sha256
        text = self.by_hash.get(digest)
        if text is None:
            raise PermanentError(
                f"{self.path} holds no description for this image (sha256 {digest[:12]}...)"
            )
        return Generation(text=text, tokens_in=0, tokens_out=0, cost=0.0, finish_reason="stop")


class DescriptionLine(BaseModel):
    """One line of a descriptions file: the image (its sha256, or a path relative to the
    file) and its description. Written by the synthetic benchmark, read by the replay."""

    model_config = ConfigDict(extra="ignore")

    item_id: str | None = None
    image: str | None = None
    image_sha256: str | None = None
    description: str

    @model_validator(mode="before")
    @classmethod
    def _needs_description_and_image(cls, obj: Any) -> Any:
        description = obj.get("description") if isinstance(obj, dict) else None
        if not isinstance(description, str) or not description.strip():
            raise ValueError("missing 'description'")
        if not (obj.get("image_sha256") or obj.get("image")):
            raise ValueError("needs 'image_sha256' or 'image'")
        return obj

    def digest(self, folder: Path, loc: str) -> str:
        """The image's sha256: as written, or hashed from the image file next to the file."""
        if self.image_sha256:
            return self.image_sha256
        image = folder / str(self.image)
        if not image.is_file():
            raise DataError(f"{loc}: image {self.image!r} not found")
        return hashlib.sha256(image.read_bytes()).hexdigest()


def load_descriptions(path: Path) -> dict[str, str]:
    """Image sha256 -> description; every problem is a DataError naming `file:line`."""
    if not path.is_file():
        raise DataError(f"{path}: replay descriptions file not found")
    found: dict[str, str] = {}
    for number, obj in iter_jsonl(path, "replay descriptions file"):
        loc = where(path, number)
        line = parse_record(DescriptionLine, obj, loc)
        found[line.digest(path.parent, loc)] = line.description
    return found


def build(spec: ModelSpec, options: ModelOptions) -> ReplayBackend:
    return ReplayBackend(spec, Path(spec.model_id))
