"""Prompt templates are data: versioned text files, loaded by name, hashed for the cache.

File format (`templates/<name>.txt`, or any path ending in `.txt`):

    version: 1
    role: judge
    about: what it is for, and where its wording comes from
    ---
    [system]
    optional system text
    [user]
    user text with {variables}

Without `[system]`/`[user]` markers the whole body is the user turn. Variables use
`str.format` syntax, so literal braces in a template are doubled; substituted values
may contain anything.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from titjudge.errors import ConfigError, did_you_mean

TEMPLATE_DIR = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    role: str
    about: str
    system: str | None
    user: str
    sha256: str

    @property
    def variables(self) -> frozenset[str]:
        names: set[str] = set()
        for text in (self.system or "", self.user):
            names.update(field for _, field, _, _ in string.Formatter().parse(text) if field)
        return frozenset(names)

    def render(self, **values: str) -> tuple[str | None, str]:
        """Fill the template; returns (system, user). Missing or extra values are errors."""
        missing = self.variables - values.keys()
        if missing:
            raise ConfigError(f"template {self.name!r} needs {', '.join(sorted(missing))}")
        extra = values.keys() - self.variables
        if extra:
            raise ConfigError(
                f"template {self.name!r} (role {self.role}) does not use {', '.join(sorted(extra))}; "
                f"it takes {', '.join(sorted(self.variables)) or 'no variables'}"
            )
        system = self.system.format(**values) if self.system else None
        return system, self.user.format(**values)

    def record(self) -> dict[str, str]:
        """What a run records and the cache keys on."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256}


def available_templates() -> list[str]:
    return sorted(p.stem for p in TEMPLATE_DIR.glob("*.txt"))


@lru_cache(maxsize=64)
def load_template(name_or_path: str) -> PromptTemplate:
    """Load a shipped template by name, or a user template by path to a .txt file."""
    path = Path(name_or_path)
    if name_or_path.endswith(".txt"):
        if not path.is_file():
            raise ConfigError(f"prompt template file {name_or_path!r} not found")
        name = path.stem
    else:
        path = TEMPLATE_DIR / f"{name_or_path}.txt"
        if not path.is_file():
            names = available_templates()
            raise ConfigError(
                f"unknown prompt template {name_or_path!r}{did_you_mean(name_or_path, names)}; "
                f"shipped templates: {', '.join(names)} (or give a path to a .txt file)"
            )
        name = name_or_path
    return parse_template(name, path.read_text(encoding="utf-8"), source=str(path))


def parse_template(name: str, text: str, source: str = "<template>") -> PromptTemplate:
    head, sep, body = text.partition("\n---\n")
    if not sep:
        raise ConfigError(f"{source}: template needs a header ending with a '---' line")
    meta: dict[str, str] = {}
    for line in head.splitlines():
        if line.strip():
            key, colon, value = line.partition(":")
            if not colon:
                raise ConfigError(f"{source}: header line {line!r} is not 'key: value'")
            meta[key.strip()] = value.strip()
    if "version" not in meta:
        raise ConfigError(f"{source}: template header needs a 'version'")
    system, user = _split_roles(body.strip("\n"))
    if not user.strip():
        raise ConfigError(f"{source}: template has no user text")
    try:
        for part in (system or "", user):
            list(string.Formatter().parse(part))
    except ValueError as exc:
        raise ConfigError(
            f"{source}: bad placeholder ({exc}); double literal braces as {{{{ }}}}"
        ) from None
    return PromptTemplate(
        name=name,
        version=meta["version"],
        role=meta.get("role", ""),
        about=meta.get("about", ""),
        system=system,
        user=user,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def _split_roles(body: str) -> tuple[str | None, str]:
    if not body.lstrip().startswith("[system]"):
        return None, body.replace("[user]\n", "", 1) if body.startswith("[user]\n") else body
    rest = body.lstrip()[len("[system]") :]
    system, sep, user = rest.partition("\n[user]\n")
    if not sep:
        raise ConfigError("template has a [system] section but no [user] section")
    return system.strip("\n"), user.strip("\n")
