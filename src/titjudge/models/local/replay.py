"""`replay:<descriptions.jsonl>`: a describer that reads stored descriptions.

For re-judging old descriptions with new judges, and for the demo, where the synthetic
benchmark's generator wrote what it drew. Lines hold `image_sha256` (or `image`, a path
relative to the file) and `description`; a request is matched by its image's bytes.
Replays are free, so they are not cached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from titjudge.errors import DataError, where
from titjudge.files import iter_jsonl, parse_record
from titjudge.models.core.base import (
    Capabilities,
    GenerateRequest,
    Generation,
    PermanentError,
    TextBackend,
)
from titjudge.models.core.options import ModelOptions
from titjudge.records.descriptions import DescriptionLine
from titjudge.records.spec import ModelSpec


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
