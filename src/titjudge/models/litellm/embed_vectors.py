"""The vectors of an OpenAI-shaped embeddings reply (online, `models.litellm.embed`, and a
batch line's, `models.litellm.batch.embed`): placed by each item's `index`, a `base64` vector
(`encoding_format: base64`) read as little-endian float32, as OpenAI packs it; rows
L2-normalised, a zero vector left as it is for the call layer to refuse."""

from __future__ import annotations

import base64
import math
import struct
from typing import Any

from titjudge.models.core.base import PermanentError


def vectors_by_index(response: Any, expected: int) -> list[list[float]]:
    """The reply's vectors in input order, placed by each item's `index`; a reply without
    exactly one vector for each of the `expected` texts is a PermanentError."""
    data = field(response, "data")
    if not isinstance(data, list):
        raise PermanentError("the embeddings reply has no 'data' list")
    placed: dict[int, list[float]] = {}
    for position, item in enumerate(data):
        index = field(item, "index")
        index = position if index is None else index
        if not isinstance(index, int) or not 0 <= index < expected or index in placed:
            raise PermanentError(
                f"the embeddings reply has a bad or repeated index {index!r} for {expected} texts"
            )
        placed[index] = _floats(field(item, "embedding"))
    if len(placed) != expected:
        raise PermanentError(f"the embeddings reply has {len(placed)} vectors for {expected} texts")
    return [placed[i] for i in range(expected)]


def field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _floats(raw: Any) -> list[float]:
    """A vector as floats: a list of numbers, or base64 little-endian float32."""
    if isinstance(raw, str):
        packed = base64.b64decode(raw)
        if len(packed) % 4:
            raise PermanentError("a base64 embedding is not a whole number of float32 values")
        return [float(x) for x in struct.unpack(f"<{len(packed) // 4}f", packed)]
    if not isinstance(raw, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw
    ):
        raise PermanentError("an embedding in the reply is not a list of numbers")
    return [float(x) for x in raw]


def normalised(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0 or not math.isfinite(norm):
        return vector
    return [x / norm for x in vector]


__all__ = ["field", "normalised", "vectors_by_index"]
