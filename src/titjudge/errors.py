"""User-facing errors: anything a user can fix by changing input, config or environment.

The CLI turns a `TitjudgeError` into one line on stderr and exit code 2; anything else
is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TitjudgeError(Exception):
    """Base for errors caused by the user's input, config or environment."""


class ConfigError(TitjudgeError):
    """A configuration file or override is invalid."""


class DataError(TitjudgeError):
    """A data file (manifest, pairs, votes, image) is missing or malformed."""


class ModelSpecError(TitjudgeError, ValueError):
    """A model spec string does not name a known backend or is malformed."""


class MissingDependencyError(TitjudgeError):
    """An optional dependency needed by a backend is not installed."""


class SettingRefused(ValueError):
    """A setting that the model it goes with refuses, raised by a config section's validator,
    with the value of that setting (`option`, as `--set` writes it) that the model takes:
    the refusal then names the exact `--set <section>.<option>=<fix>` that fixes it."""

    def __init__(self, message: str, option: str = "", fix: str | None = None) -> None:
        super().__init__(message)
        self.option, self.fix = option, fix


def install_hint(extra: str) -> str:
    """How to add an extra: titjudge installs from its checkout, not from a package index."""
    checkout = "."
    try:
        import json
        from importlib.metadata import distribution

        url = json.loads(distribution("titjudge").read_text("direct_url.json") or "{}").get(
            "url", ""
        )
        if url.startswith("file://"):
            checkout = url.removeprefix("file://")
    except Exception:  # not installed from a checkout (a wheel): say the generic thing
        pass
    return f"pip install -e '{checkout}[{extra}]'"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ' (did you mean 'x'?)' for the closest choice, or '' when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def listing(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c': items named in a sentence."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def where(path: object, line: int | None = None) -> str:
    """Format a file location for error messages: 'path:line' or 'path'."""
    return f"{path}:{line}" if line is not None else f"{path}"


def whole_number(value: str, what: str, *, minimum: int = 0, other: str = "") -> int:
    """`value` as a whole number of at least `minimum`, or one DataError naming `what`
    (`other`: what else the setting takes, said in the message: " or 'any'")."""
    try:
        number = int(value)
    except ValueError:
        raise DataError(f"{what} must be a whole number{other}, got {value!r}") from None
    if number < minimum:
        floor = "must not be negative" if minimum == 0 else f"must be at least {minimum}"
        raise DataError(f"{what} {floor}, got {number}")
    return number
