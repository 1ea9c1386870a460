"""A model swapped on the command line takes the settings that go with it (issue 48).

`--set judges.tit_llm_g.model=litellm:openai/gpt-4o` swaps the model of a section the config
file wrote for another (there Gemini 2.5 Pro, with `thinking: {budget: 1024}` and
`api_key_env: GEMINI_API_KEY`). What the user typed on the command line is theirs, honoured or
refused at load; what the file wrote for its own model is the config's, and the swap, being
the user's, decides what of it still applies:

| the config's | after the model is swapped |
|---|---|
| `thinking` | kept where the new model takes it, else left out (the model's own default) |
| `temperature` | kept where the new model takes it, else left out (the default); in a run config, a judge on the describer's model follows the describer's swap |
| `params` | another provider: left out (they are passed to the provider as they are); the same provider: the keys its family refuses left out |
| `api_key_env`, `structured_output` | another provider: left out (its own key variables; the default dialect) |
| `price` | left out: it priced the other model |
| `api_base` | another provider: refused, with the `--set` that drops it or names a server |
| `batch: true` | refused where the new provider has no batch API, with `--set ...batch=false` |

Whatever is left out is said in one line per swapped section, once, when the config loads,
and kept with the config (`swapped`) for the run's config.yaml. A section that then lacks what
its new model needs (Gemini 2.5 must set a thinking budget) is refused by its validator with
the exact `--set` that fixes it (`errors.SettingRefused`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import ValidationError

from titjudge.errors import ConfigError, listing
from titjudge.models.core.options import ModelOptions, serving_provider, shown_url
from titjudge.models.core.rules import (
    params_refused,
    temperature_refused,
    thinking_refused,
    unknown_provider,
)

log = logging.getLogger(__name__)

Path = tuple[str | int, ...]
#: the options that say how a model is reached, which a model's swap may leave out
_REACH = ("api_base", "thinking", "params")


def follow_swaps(
    file: dict[str, Any], data: dict[str, Any], typed: list[Path], source: str
) -> list[str]:
    """Leave out of `data` (the file's mapping after the overrides `typed` set, changed in
    place) the settings the file wrote for a model an override swapped that do not go with the
    new model; one line per swapped section saying what was left out and why. ConfigError for
    a setting that cannot follow (an api_base at another provider)."""

    def users(*path: str | int) -> bool:
        return any(path[: len(p)] == p for p in typed)

    notes = []
    swapped: dict[Path, tuple[str, str]] = {}
    for path, section in _sections(data):
        before = _at(file, path)
        was = before.get("model") if isinstance(before, dict) else None
        model = section.get("model")
        if not users(*path, "model") or users(*path) or not isinstance(was, str):
            continue
        if not isinstance(model, str) or model == was:
            continue
        swapped[path] = (was, model)
        where = _named(data, path)
        left = _follow(section, was, model, where, lambda *key, p=path: users(*p, *key), source)
        if left:
            notes.append(f"{where}.model={model}: left out the config's {listing(left)}")
    describer = ("describer",)
    if describer in swapped and isinstance(data.get("judges"), list):
        notes.extend(_bound_judges(data, swapped[describer], users))
    return notes


def say_swapped(notes: list[str]) -> None:
    """Say once what the swaps left out: a warning each (the CLI prints warnings on stderr)."""
    for note in notes:
        log.warning(note)


def _follow(
    section: dict[str, Any],
    was: str,
    model: str,
    where: str,
    users: Callable[..., bool],
    source: str,
) -> list[str]:
    """Leave out of one swapped section what the config wrote for `was` that `model` does not
    take; what was left out, each with its value and why: `thinking {budget: 1024} (not taken
    by litellm:openai/gpt-4o)`."""

    def config_sets(key: str) -> bool:
        return section.get(key) is not None and not users(key)

    left: list[str] = []

    def leave(key: str, why: str) -> None:
        left.append(f"{key} {_shown(section.pop(key))} ({why})")

    given = section.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    provider, before = serving_provider(model, params), serving_provider(was, params)
    if provider != before:
        typo = unknown_provider(model, ModelOptions(params=params))
        if typo is not None:  # not another provider: a misspelt one (checked with no api_base)
            raise ConfigError(f"{source}: {where}.model {model}: {typo}")
        if config_sets("api_base"):
            given_base = section["api_base"]
            urls = given_base if isinstance(given_base, list) else [given_base]
            shown = ", ".join(shown_url(str(url)) for url in urls)  # never a credential
            raise ConfigError(
                f"{source}: {where}.api_base {shown} is the config's, for {was}; "
                f"{model} is served by {provider}, not {before}: add --set {where}.api_base=null "
                f"to reach {provider} where litellm does, or --set {where}.api_base=URL for a "
                "server of yours"
            )
        for key in ("api_key_env", "structured_output"):
            if config_sets(key):
                leave(key, f"{before}'s, and {model} is {provider}'s")
        for key in [k for k in params if not users("params", k)]:
            params.pop(key)  # named, not shown: a value in params may be anything
            left.append(f"params.{key} ({before}'s)")
    if config_sets("price"):
        leave("price", f"{was}'s")
    options = _options(section)
    if options is None:
        return left  # a setting its validator refuses anyway: the error names it
    if config_sets("thinking") and thinking_refused(model, options) is not None:
        leave("thinking", f"not taken by {model}")
        options = _options(section)
    for key in params_refused(model, options) if options is not None else []:
        if not users("params", key):
            params.pop(key)
            left.append(f"params.{key} (refused by {model})")
    options = _options(section)
    temperature = section.get("temperature")
    if options is not None and config_sets("temperature"):
        refused = temperature_refused(model, options, temperature)
        if refused is not None:
            leave("temperature", f"not taken by {model}")
    if "params" in section and not params and not users("params"):
        section.pop("params")
    return left


def _bound_judges(
    data: dict[str, Any], swap: tuple[str, str], users: Callable[..., bool]
) -> list[str]:
    """The judges that call the describer's model (they name none): a temperature the config
    set for them follows the describer's swap as the describer's own does."""
    was, model = swap
    options = _options(data["describer"])
    notes = []
    for index, judge in enumerate(data["judges"]):
        if not isinstance(judge, dict) or judge.get("model") is not None or options is None:
            continue
        value = judge.get("temperature")
        if value is None or users("judges", index, "temperature") or users("judges", index):
            continue
        if temperature_refused(model, options, value) is not None:
            judge.pop("temperature")
            where = _named(data, ("judges", index))
            notes.append(
                f"{where} (on the describer's model, now {model}): left out the config's "
                f"temperature {_shown(value)} (not taken by {model})"
            )
    return notes


def _options(section: dict[str, Any]) -> ModelOptions | None:
    """How the section reaches its model, as the validator reads it; None when that does not
    validate (the section's own error says why)."""
    try:
        return ModelOptions.model_validate({k: section[k] for k in _REACH if k in section})
    except ValidationError:
        return None


def _sections(data: dict[str, Any]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every section naming a model: a top-level mapping (`describer`) or an entry of a
    top-level list (`judges`, an ablation's `describers` and `comparers`)."""
    for key, value in data.items():
        if isinstance(value, dict) and "model" in value:
            yield (key,), value
        elif isinstance(value, list):
            for index, entry in enumerate(value):
                if isinstance(entry, dict) and "model" in entry:
                    yield (key, index), entry


def _at(data: Any, path: Path) -> Any:
    for part in path:
        if isinstance(data, dict) and isinstance(part, str):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            return None
    return data


def _named(data: dict[str, Any], path: Path) -> str:
    """The section's path as `--set` takes it, a list entry by its name: `judges.tit_llm_g`."""
    parts = []
    for depth, part in enumerate(path):
        entry = _at(data, path[: depth + 1])
        name = entry.get("name") if isinstance(part, int) and isinstance(entry, dict) else None
        parts.append(name if isinstance(name, str) else str(part))
    return ".".join(parts)


def _shown(value: Any) -> str:
    """A setting as YAML's flow style writes it: `{budget: 1024}`, `GEMINI_API_KEY`."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


__all__ = ["follow_swaps", "say_swapped"]
