"""Loading a run config: YAML file -> `--set a.b=c` overrides -> validation, with one readable
line per problem (key path, what is wrong, did-you-mean)."""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from titjudge.config.schema import RunConfig, SwapNotes
from titjudge.config.swap import follow_swaps, say_swapped
from titjudge.errors import ConfigError, SettingRefused, did_you_mean, listing
from titjudge.files import load_yaml, parse_yaml, yaml_text
from titjudge.judges.options import JudgeOptions
from titjudge.models.core.options import StrictModel

#: where one `--set` put its value: keys of mappings and indices of lists, from the top
SetPath = tuple[str | int, ...]


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `a.b=c` overrides. Values are parsed as YAML (`run.concurrency=8` is an int).

    List entries are addressed by index (`judges.0.model=...`) or, for lists of named
    entries, by name (`judges.tit_llm_g.model=...`).
    """
    return overridden(data, overrides)[0]


def overridden(data: dict[str, Any], overrides: list[str]) -> tuple[dict[str, Any], list[SetPath]]:
    """`apply_overrides`, and where each override put its value (a named list entry as its
    index), so that what the user typed can be told from what the file says."""
    data = copy.deepcopy(data)
    paths: list[SetPath] = []
    for override in overrides:
        key, sep, raw = override.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--set {override!r}: expected KEY=VALUE, e.g. describer.model=litellm:openai/gpt-4o"
            )
        try:
            value = parse_yaml(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        parts = key.strip().split(".")
        node: Any = data
        path: list[str | int] = []
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            here = ".".join(parts[: depth + 1])
            if isinstance(node, list):
                index = _list_index(node, part, here)
                path.append(index % len(node))
                if last:
                    node[index] = value
                else:
                    node = node[index]
            elif isinstance(node, dict):
                path.append(part)
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                raise ConfigError(
                    f"--set {key}: {'.'.join(parts[:depth])} is a value, not a section"
                )
        paths.append(tuple(path))
    return data, paths


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


def _tagged(annotation: Any) -> tuple[str, dict[str, type[BaseModel]]] | None:
    """For a union of models told apart by a tag field: that field's name and tag -> model."""
    args = get_args(annotation)
    if get_origin(annotation) is Annotated:
        for meta in args[1:]:
            field = getattr(meta, "discriminator", None)
            if isinstance(field, str):
                members: dict[str, type[BaseModel]] = {}
                for member in get_args(args[0]):
                    for tag in get_args(member.model_fields[field].annotation):
                        members[tag] = member
                return field, members
        return _tagged(args[0])
    for arg in args if get_origin(annotation) in (Union, UnionType) else ():
        found = _tagged(arg)
        if found is not None:
            return found
    return None


def _child(annotation: Any, part: int | str) -> Any:
    """The annotation at `part` (a list index or a field name) inside `annotation`."""
    if isinstance(part, int):
        if get_origin(annotation) is list:
            return get_args(annotation)[0]
        for arg in get_args(annotation):
            found = _child(arg, part)
            if found is not None:
                return found
        return None
    model = _model_in(annotation)
    field = model.model_fields.get(part) if model is not None else None
    return field.annotation if field is not None else None


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


@dataclass
class _Place:
    """Where an error's location leads: the path to print (union tags left out), the
    annotation reached, and the tag and members of the union it was reached through."""

    path: list[str]
    annotation: Any
    tag: str | None = None
    members: dict[str, type[BaseModel]] | None = None

    def dotted(self, *more: str) -> str:
        return ".".join([*self.path, *more]) or "(top level)"


def _place(model: Any, loc: tuple[int | str, ...]) -> _Place:
    place = _Place([], model)
    for part in loc:
        union = _tagged(place.annotation)
        if union is not None and isinstance(part, str) and part in union[1]:
            place.annotation, place.tag, place.members = union[1][part], part, union[1]
            continue
        place.path.append(str(part))
        place.annotation, place.tag, place.members = _child(place.annotation, part), None, None
    return place


def _kind_reason(place: _Place, key: str, value: Any) -> str | None:
    """Why `key` is refused where `place` leads when a judge kind says: its own reason, or the
    kinds that do read it (not a typo of one of its own fields); None: an unknown name."""
    model = _model_in(place.annotation)
    if model is None or place.tag is None:
        return None
    refused = model.refused if issubclass(model, JudgeOptions) else {}
    if key in refused:
        return f"{place.dotted(key)}: {refused[key]}"
    owners = [tag for tag, m in (place.members or {}).items() if key in m.model_fields]
    if not owners or place.members is None or _meant(key, list(model.model_fields)):
        return None
    field = place.members[owners[0]].model_fields[key]
    named = f"{key} {value!r}" if get_origin(field.annotation) is Literal else repr(key)
    return f"{place.dotted(key)}: {named} applies to {listing(owners)} judges, not {place.tag!r}"


def _meant(key: str, fields: list[str]) -> str | None:
    """The field a misspelt `key` most likely meant (`did_you_mean`'s choice), if any."""
    close = difflib.get_close_matches(key, fields, n=1, cutoff=0.6)
    return close[0] if close else None


def _fix(place: _Place, err: Any) -> str:
    """'; --set judges.j.thinking=off fixes it' for a setting its model refuses that names the
    value it takes (`SettingRefused.fix`); '' for any other error. The section is named by its
    name where it has one (`--set` takes a list entry's name or its index)."""
    refused = (err.get("ctx") or {}).get("error")
    if not isinstance(refused, SettingRefused) or refused.fix is None or not refused.option:
        return ""
    path = list(place.path)
    given = err.get("input")
    if (
        path
        and path[-1].isdigit()
        and isinstance(given, dict)
        and isinstance(given.get("name"), str)
    ):
        path[-1] = given["name"]
    return f"; --set {'.'.join([*path, refused.option])}={refused.fix} fixes it"


def format_validation_error(exc: ValidationError, model: Any, source: str) -> str:
    """Every problem on one line, `source` first: key paths, what is wrong, and a hint.
    Unknown keys are listed together; a required key that a misspelt one meant (`price:
    {inptu: 1}`) is named once, by the did-you-mean, not again as missing. Inside a union of
    kinds the path leaves the kind out (`judges.0.tempreature`), and the hint is drawn from
    that kind's fields."""
    unknown: list[str] = []
    meant: set[str] = set()
    problems: list[str | None] = []  # None: where the unknown keys are listed
    missing: list[tuple[int, str]] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            where, key = _place(model, loc[:-1]), str(loc[-1])
            reason = _kind_reason(where, key, err["input"])
            if reason is not None:
                problems.append(reason)
                continue
            fields = list(getattr(_model_in(where.annotation), "model_fields", {}))
            if not unknown:
                problems.append(None)
            unknown.append(f"'{where.dotted(key)}'{did_you_mean(key, fields)}")
            if (found := _meant(key, fields)) is not None:
                meant.add(where.dotted(found))
            continue
        place = _place(model, loc)
        if err["type"] == "missing":
            missing.append((len(problems), place.dotted()))
            problems.append(f"missing required key '{place.dotted()}'")
        elif err["type"] == "union_tag_not_found":
            field = str(err["ctx"]["discriminator"]).strip("'")
            problems.append(f"missing required key '{place.dotted(field)}'")
        elif err["type"] == "union_tag_invalid":
            tag, union = str(err["ctx"]["tag"]), _tagged(place.annotation)
            field, tags = union if union is not None else ("kind", {})
            problems.append(
                f"{place.dotted(field)}: unknown {field} {tag!r}{did_you_mean(tag, tags)}"
            )
        else:
            why = f"{place.dotted()}: {err['msg'].removeprefix('Value error, ')}"
            problems.append(why + _fix(place, err))
    for index, key in missing:
        if key in meant:
            problems[index] = ""
    listed = f"unknown key{'s' if len(unknown) > 1 else ''} {listing(unknown)}" if unknown else ""
    said = [listed if text is None else text for text in problems]
    return f"{source}: {'; '.join(text for text in said if text)}"


def validate_config(data: dict[str, Any], model: Any, source: str) -> Any:
    """`data` validated as `model` (a config model, or a union of them such as `JudgeConfig`)."""
    try:
        return TypeAdapter(model).validate_python(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, model, source)) from None


#: top-level keys of one command's config that the other command's lacks (both have name,
#: data and run): `titjudge run` reads RunConfig, `titjudge ablation` AblationConfig
COMMAND_KEYS = {
    "run": ("describer", "judges"),
    "ablation": ("describers", "comparers", "bootstrap"),
}


def refuse_other_command(data: dict[str, Any], path: str | Path, command: str) -> None:
    """A config written for the other command (it has that command's keys and none of this
    one's) is refused with one line saying which command it is for."""
    if any(key in data for key in COMMAND_KEYS[command]):
        return
    for other, keys in COMMAND_KEYS.items():
        found = [key for key in keys if key in data]
        if other != command and found:
            article = "an" if other[0] in "aeiou" else "a"
            raise ConfigError(
                f"{path} is {article} {other} config (it has {', '.join(found)}); "
                f"use titjudge {other} {path}"
            )


def configured(raw: dict[str, Any], overrides: list[str], model: Any, source: str) -> Any:
    """`raw` (a config file's mapping) with `overrides` applied, validated as `model`. A model
    an override swaps takes the settings that go with it (`config.swap`): what the file wrote
    for its old model and the new one does not take is left out, said once here (a warning)
    and kept on the config (`swapped`, written to the run's config.yaml)."""
    data, typed = overridden(raw, overrides)
    notes = follow_swaps(raw, data, typed, source)
    config = validate_config(data, model, source)
    say_swapped(notes)
    if isinstance(config, SwapNotes):
        config.keep_swapped(notes)
    return config


def load_configured(path: str | Path, overrides: list[str] | None, model: Any, command: str) -> Any:
    """The config file at `path`, overridden and validated as `model`; a file written for
    another command than `command` is refused naming it (`refuse_other_command`)."""
    raw = load_yaml(path)
    refuse_other_command(raw, path, command)
    return configured(raw, overrides or [], model, str(path))


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Load, override and validate a run config."""
    config: RunConfig = load_configured(path, overrides, RunConfig, "run")
    return config


def dump_config(config: StrictModel) -> str:
    """The config as YAML, paths as strings, in field order."""
    return yaml_text(config.model_dump(mode="json"))
