"""`replay:<descriptions.jsonl>`: a describer that reads stored descriptions.

For re-judging old descriptions with new judges, and for the demo, where the synthetic
benchmark's generator wrote what it drew. Lines hold `image_sha256` (or `image`, a path
relative to the file) and `description`; a request is matched by its image's bytes.
Replays are free, so they are not cached.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from titjudge.errors import DataError
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


def load_descriptions(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise DataError(f"{path}: replay descriptions file not found")
    found: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
            description = row.get("description") if isinstance(row, dict) else None
            if not isinstance(description, str) or not description.strip():
                raise DataError(f"{path}:{number}: missing 'description'")
            digest = row.get("image_sha256")
            if not digest and row.get("image"):
                image = path.parent / str(row["image"])
                if not image.is_file():
                    raise DataError(f"{path}:{number}: image {row['image']!r} not found")
                digest = hashlib.sha256(image.read_bytes()).hexdigest()
            if not digest:
                raise DataError(f"{path}:{number}: needs 'image_sha256' or 'image'")
            found[str(digest)] = description
    return found


def build(spec: ModelSpec, options: ModelOptions) -> ReplayBackend:
    return ReplayBackend(spec, Path(spec.model_id))
