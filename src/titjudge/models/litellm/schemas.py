"""Response schemas within each provider's documented structured-output subset.

The pydantic model stays the one definition of a verdict: the call layer validates every
reply against it. What is *sent* is a translation that the provider accepts and enforces:

- Gemini (`responseJsonSchema`, which litellm passes through unchanged for Gemini 2.0+):
  a subset of JSON Schema. "If $ref is set on a sub-schema, no other properties, except
  those starting with $, may be set" (Gemini API structured-output docs; the 400 it gives
  otherwise is shown in google-gemini/gemini-cli#4758). Other unsupported keywords are
  ignored, not enforced, so they are dropped rather than sent as promises.
- OpenAI strict mode (`strict: true`, Structured Outputs guide): every object has
  `additionalProperties: false` and lists every property in `required`; only the supported
  keywords may appear (no `default`, no `minLength`). A schema that cannot meet that is sent
  with `strict: false` (asked, not constrained) and says so in the run's resolved config.
- Everything else (vLLM's guided decoding takes full JSON Schema) gets the schema with
  `$ref` siblings inlined, the one shape some servers mishandle.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

#: Gemini's documented JSON Schema subset (ai.google.dev, "Structured output": JSON Schema support)
GEMINI_KEYWORDS = frozenset(
    {
        "$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum",
        "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf",
        "properties", "additionalProperties", "required", "propertyOrdering", "nullable",
    }
)  # fmt: skip
#: OpenAI Structured Outputs, strict mode: the supported keywords
OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "$defs", "$ref", "type", "description", "title", "enum", "const", "anyOf", "items",
        "properties", "required", "additionalProperties", "pattern", "format", "multipleOf",
        "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
    }
)  # fmt: skip
#: keywords whose value is a map of names to sub-schemas (the names are not keywords)
_NAMED = ("properties", "$defs")


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return dict(node)


def inline_ref_siblings(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace `{"$ref": X, "description": ...}` by X's body with those siblings on top."""
    root = copy.deepcopy(schema)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node and any(not k.startswith("$") for k in node):
            target = _resolve(root, node["$ref"])
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return walk(merged)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _NAMED and isinstance(value, dict):
                out[key] = {name: walk(sub) for name, sub in value.items()}
            else:
                out[key] = walk(value)
        return out

    return walk(root)  # type: ignore[no-any-return]


def _keep(node: Any, allowed: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_keep(v, allowed) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _keep(sub, allowed) for name, sub in value.items()}
        elif key == "const" and "const" not in allowed:
            out["enum"] = [value]
        elif key in allowed:
            out[key] = _keep(value, allowed)
    return out


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` within Gemini's subset: no sibling beside `$ref`, unsupported keywords dropped."""
    return _keep(inline_ref_siblings(schema), GEMINI_KEYWORDS)  # type: ignore[no-any-return]


def openai_strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """`schema` made to OpenAI strict mode's rules, or None when it cannot be."""
    fixed = _keep(inline_ref_siblings(schema), OPENAI_STRICT_KEYWORDS)

    def walk(node: Any) -> bool:
        if isinstance(node, list):
            return all(walk(v) for v in node)
        if not isinstance(node, dict):
            return True
        if node.get("type") == "object" or "properties" in node:
            extra = node.get("additionalProperties", False)
            if extra not in (False, None):
                return False  # a map with free keys cannot be strict
            node["additionalProperties"] = False
            node["required"] = list(node.get("properties", {}))
        for key, value in node.items():
            if key in _NAMED and isinstance(value, dict):
                if not all(walk(sub) for sub in value.values()):
                    return False
            elif not walk(value):
                return False
        return True

    return fixed if walk(fixed) else None


def _subschemas(schema: Any, path: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (path, sub-schema) of `schema`, itself first."""
    if isinstance(schema, list):
        for i, sub in enumerate(schema):
            yield from _subschemas(sub, f"{path}[{i}]")
        return
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key, value in schema.items():
        if key in _NAMED and isinstance(value, dict):
            for name, sub in value.items():
                yield from _subschemas(sub, f"{path}.{key}.{name}")
        else:
            yield from _subschemas(value, f"{path}.{key}")


def _unsupported(path: str, node: dict[str, Any], allowed: frozenset[str]) -> list[str]:
    return [f"{path}: unsupported keyword {key!r}" for key in node if key not in allowed]


def gemini_violations(schema: Any) -> list[str]:
    """Where `schema` breaks Gemini's documented rules (used by the tests on every schema sent)."""
    found: list[str] = []
    for path, node in _subschemas(schema):
        siblings = sorted(k for k in node if not k.startswith("$")) if "$ref" in node else []
        if siblings:
            found.append(f"{path}: $ref with sibling keys {siblings}")
        found += _unsupported(path, node, GEMINI_KEYWORDS)
    return found


def openai_strict_violations(schema: Any) -> list[str]:
    """Where `schema` breaks OpenAI strict mode's documented rules."""
    found: list[str] = []
    for path, node in _subschemas(schema):
        if "properties" in node or node.get("type") == "object":
            if node.get("additionalProperties") is not False:
                found.append(f"{path}: object without additionalProperties: false")
            missing = sorted(set(node.get("properties", {})) - set(node.get("required", [])))
            if missing:
                found.append(f"{path}: properties not in required: {missing}")
        found += _unsupported(path, node, OPENAI_STRICT_KEYWORDS)
    return found


__all__ = [
    "gemini_schema",
    "gemini_violations",
    "inline_ref_siblings",
    "openai_strict_schema",
    "openai_strict_violations",
]
