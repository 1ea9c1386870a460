"""Structured outputs: find the JSON in a model's reply and validate it against a schema.

Models wrap JSON in code fences, add prose before or after, or emit several objects.
We take the first balanced JSON object that validates; the error names what was wrong
so a re-ask can quote it back to the model.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class StructuredOutputError(ValueError):
    """The reply holds no JSON object that validates against the schema."""


def json_candidates(text: str) -> list[str]:
    """Balanced `{...}` spans, fenced blocks first, in order of appearance."""
    spans = [m.group(1).strip() for m in _FENCE.finditer(text)]
    spans += _balanced_objects(text)
    return list(dict.fromkeys(s for s in spans if s))


def _balanced_objects(text: str) -> list[str]:
    found, depth, start, in_str, escape = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : i + 1])
    return found


def parse_structured(text: str, schema: type[T]) -> T:
    """Return the first JSON object in `text` that validates; raise StructuredOutputError."""
    if not text or not text.strip():
        raise StructuredOutputError("the reply is empty")
    candidates = json_candidates(text)
    if not candidates:
        raise StructuredOutputError("the reply contains no JSON object")
    first_error = ""
    for candidate in candidates:
        try:
            data: Any = json.loads(candidate)
        except json.JSONDecodeError as exc:
            first_error = first_error or f"invalid JSON ({exc.msg} at position {exc.pos})"
            continue
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            first_error = first_error or _short(exc)
    raise StructuredOutputError(first_error)


def _short(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(object)"
        parts.append(f"{loc}: {err['msg']}")
    return "schema mismatch: " + "; ".join(parts)


@lru_cache(maxsize=256)
def response_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """JSON schema for provider structured-output modes (built once per schema class: it
    is part of every structured call's cache key, and pydantic takes ~0.6 ms to build it)."""
    return schema.model_json_schema()
