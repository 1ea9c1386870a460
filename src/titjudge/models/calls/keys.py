"""Cache keys: SHA-256 of everything that can change a model's output, nothing else.

In: backend, model id, system and user text (the resolved template), earlier turns,
image content hashes, generation parameters, provider parameters, output schema, the
template's name and version, and the repeat index. Out: timeouts, retry limits,
concurrency, rate limits, API base URL and key (where a model is served does not
change what it says).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from titjudge.models.core.base import GenerateRequest
from titjudge.records.spec import ModelSpec

#: bump when the stored value format changes, so old entries are never misread
CACHE_FORMAT = 1


def _digest(payload: dict[str, Any]) -> str:
    blob = json.dumps(
        payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def generation_key(
    spec: ModelSpec,
    request: GenerateRequest,
    *,
    params: dict[str, Any] | None = None,
    template: dict[str, str] | None = None,
    purpose: str = "text",
    options: dict[str, Any] | None = None,
) -> str:
    """Key for one text generation. `purpose` separates e.g. raw text from validated JSON.
    `options` (thinking) enter the key only when set, so older keys stay valid."""
    payload: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "purpose": purpose,
        "backend": spec.backend,
        "model": spec.model_id,
        "system": request.system,
        "prompt": request.prompt,
        "history": [list(turn) for turn in request.history],
        "images": [image.sha256 for image in request.images],
        "max_tokens": request.max_tokens,
        "temperature": "provider default" if request.temperature is None else request.temperature,
        "json_schema": request.json_schema,
        "top_logprobs": request.top_logprobs,
        "sample": request.sample,
        "params": params or {},
        "template": {k: template[k] for k in ("name", "version")} if template else None,
    }
    if options:
        payload["options"] = options
    return _digest(payload)


def image_embedding_key(spec: ModelSpec, sha256: str, params: dict[str, Any]) -> str:
    """Key for one embedded image (a CLIP-family model's image side), by its content hash."""
    return _digest(
        {
            "format": CACHE_FORMAT,
            "purpose": "image-embedding",
            "backend": spec.backend,
            "model": spec.model_id,
            "image_sha256": sha256,
            "params": params,
        }
    )


def embedding_key(spec: ModelSpec, text: str, *, params: dict[str, Any] | None = None) -> str:
    """Key for one embedded text (the caller has already applied any instruction)."""
    return _digest(
        {
            "format": CACHE_FORMAT,
            "purpose": "embedding",
            "backend": spec.backend,
            "model": spec.model_id,
            "text": text,
            "params": params or {},
        }
    )
