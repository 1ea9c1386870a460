"""Loading a run config: YAML file -> `--set a.b=c` overrides -> validation, with one readable
line per problem (key path, what is wrong, did-you-mean)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from titjudge.config.schema import RunConfig
from titjudge.errors import ConfigError, did_you_mean
from titjudge.models.options import StrictModel


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; one clear error for a missing file or bad YAML."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{loc}: invalid YAML ({problem})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: config must be a YAML mapping, got {type(data).__name__}")
    return data


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `a.b=c` overrides. Values are parsed as YAML (`run.concurrency=8` is an int).

    List entries are addressed by index (`judges.0.model=...`) or, for lists of named
    entries, by name (`judges.tit_llm_g.model=...`).
    """
    data = copy.deepcopy(data)
    for override in overrides:
        key, sep, raw = override.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--set {override!r}: expected KEY=VALUE, e.g. describer.model=litellm:openai/gpt-4o"
            )
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        parts = key.strip().split(".")
        node: Any = data
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            here = ".".join(parts[: depth + 1])
            if isinstance(node, list):
                index = _list_index(node, part, here)
                if last:
                    node[index] = value
                else:
                    node = node[index]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                raise ConfigError(
                    f"--set {key}: {'.'.join(parts[:depth])} is a value, not a section"
                )
    return data


def _list_index(node: list[Any], part: str, here: str) -> int:
    if part.lstrip("-").isdigit():
        index = int(part)
        if not -len(node) <= index < len(node):
            raise ConfigError(
                f"--set {here}: index {index} out of range (list has {len(node)} entries)"
            )
        return index
    names = [entry.get("name") for entry in node if isinstance(entry, dict)]
    if part in names:
        return names.index(part)
    raise ConfigError(
        f"--set {here}: no entry named {part!r}{did_you_mean(part, [n for n in names if n])}"
    )


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """Names of the fields allowed at `loc` (the parent of an unknown key)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        fields = getattr(current, "model_fields", None) if isinstance(current, type) else None
        field = fields.get(part) if fields else None
        if field is None:
            return []
        current = _model_in(field.annotation)
    return (
        list(current.model_fields)
        if isinstance(current, type) and issubclass(current, BaseModel)
        else []
    )


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def format_validation_error(exc: ValidationError, model: type[BaseModel], source: str) -> str:
    """One readable message per problem: key path, what is wrong, and a hint."""
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            hint = did_you_mean(key, _fields_at(model, loc[:-1]))
            lines.append(f"{source}: unknown key '{path}'{hint}")
        elif err["type"] == "missing":
            lines.append(f"{source}: missing required key '{path}'")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"{source}: {path}: {msg}")
    return "\n".join(lines)


def validate_config(data: dict[str, Any], model: type[StrictModel], source: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, model, source)) from None


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Load, override and validate a run config."""
    data = apply_overrides(load_yaml(path), overrides or [])
    return validate_config(data, RunConfig, str(path))


def dump_config(config: StrictModel) -> str:
    """The config as YAML, paths as strings, in field order."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
