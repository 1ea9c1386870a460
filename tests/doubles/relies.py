"""Naming what titjudge relies on in a dependency, so a test that fails after an upgrade says
which behaviour went away, and under which installed version.

Tests assert what titjudge does with what a provider sends. Some of that passes through a
dependency's own behaviour (litellm turning `thinking` into Gemini's `thinkingConfig`, or
keeping the provider's headers on its exception); such an assertion goes through
`relies_on`, whose failure reads "titjudge relies on litellm <behaviour>; litellm X.Y.Z no
longer does: <what was seen>".
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def installed(dependency: str = "litellm") -> str:
    """`"litellm 1.110.2"`: the dependency and its installed version, for failure messages."""
    try:
        return f"{dependency} {version(dependency)}"
    except PackageNotFoundError:
        return f"{dependency} (not installed)"


def relies_on(
    behaviour: str, holds: bool, seen: object = None, *, dependency: str = "litellm"
) -> None:
    """Fail, naming `dependency`'s `behaviour` and its installed version, unless it `holds`."""
    if holds:
        return
    found = "" if seen is None else f": saw {seen!r}"
    raise AssertionError(
        f"titjudge relies on {dependency} {behaviour}; {installed(dependency)} no longer does"
        f"{found}"
    )


__all__ = ["installed", "relies_on"]
