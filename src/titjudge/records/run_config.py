"""config.yaml: the config a run ran with and what it resolved to, as one typed record.

A run writes it once, after the graph, when the backend facts are known (`run.runner`):
the validated config as plain JSON types, then `resolved` (the describer's backend and
template, each judge as it recorded itself, the models loaded, the item count, the limit,
what a command-line swap left out, the installed packages). Every view reads it back through
`RunConfigFile.read` (`titjudge.load_run(dir).config`, the audit, `titjudge compare`,
`titjudge metrics RUN_DIR`): the data paths, the judges' names and kinds and the resolved
template hashes are typed fields; every other key stays as it was written, in `.doc`.

The file is written from `.doc`, the mapping the fields were read from, so its bytes are
what they were before this record existed; a config.yaml an older release wrote loads the
same way (every field is optional, unknown keys are kept).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from titjudge.files import atomic_write, load_yaml, parse_record, yaml_text
from titjudge.records.judge_facts import JudgeFacts, TemplateFacts


class _ConfigSection(BaseModel):
    """A section read from config.yaml: its known keys typed, the others kept."""

    model_config = ConfigDict(extra="allow")


class ConfigData(_ConfigSection):
    """`data:`: the files the run read (paths as written, relative to where it ran)."""

    manifest: str | None = None
    human_pairs: str | None = None
    ranks: str | None = None


class ConfigJudge(_ConfigSection):
    """One entry of `judges:` as configured."""

    name: str
    kind: str | None = None
    model: str | None = None
    fallback: str | None = None


class ResolvedDescriber(_ConfigSection):
    """`resolved.describer`: the describer's backend facts and its template."""

    template: TemplateFacts | None = None


class ResolvedFacts(_ConfigSection):
    """`resolved:`: what the config resolved to once the run's models were built."""

    describer: ResolvedDescriber | None = None
    #: each judge as it recorded itself (name, kind, model, template, ...)
    judges: list[JudgeFacts] = Field(default_factory=list)
    #: each model the run built, as its backend describes itself
    models: list[dict[str, Any]] = Field(default_factory=list)
    items: int | None = None
    limit: int | None = None
    #: what a model swapped on the command line left out of the config (`config.swap`)
    swapped: list[str] | None = None
    packages: dict[str, str] = Field(default_factory=dict)


class RunConfigFile(_ConfigSection):
    """config.yaml, typed where a view reads it; `.doc` is the whole mapping as written."""

    name: str = ""
    data: ConfigData | None = None
    describer: dict[str, Any] = Field(default_factory=dict)
    judges: list[ConfigJudge] = Field(default_factory=list)
    run: dict[str, Any] = Field(default_factory=dict)
    resolved: ResolvedFacts | None = None
    _doc: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def doc(self) -> dict[str, Any]:
        """The mapping config.yaml holds, every key in the order it was written."""
        return self._doc

    @classmethod
    def of(cls, doc: Mapping[str, Any], where: str = "config.yaml") -> RunConfigFile:
        """The record of a config.yaml mapping; a DataError names the first key that does not
        fit."""
        plain = json.loads(json.dumps(dict(doc), default=str))  # plain types only
        found = parse_record(cls, plain, where)
        found._doc = plain
        return found

    @classmethod
    def made(
        cls, config: Mapping[str, Any], resolved: Mapping[str, Any], packages: Mapping[str, str]
    ) -> RunConfigFile:
        """The record a run writes: its validated config (as JSON), then `resolved` with the
        installed packages last."""
        return cls.of({**config, "resolved": {**resolved, "packages": dict(packages)}})

    @classmethod
    def read(cls, run_dir: Path) -> RunConfigFile:
        """A run dir's config.yaml; an empty record when it has none (a folder laid out by
        hand)."""
        path = run_dir / "config.yaml"
        if not path.is_file():
            return cls()
        return cls.of(load_yaml(path), str(path))

    def write(self, run_dir: Path) -> Path:
        path = run_dir / "config.yaml"
        atomic_write(path, yaml_text(self.doc))
        return path

    def judge(self, name: str) -> ConfigJudge | None:
        """The configured judge named `name`."""
        return next((judge for judge in self.judges if judge.name == name), None)

    def data_path(self, key: str) -> str | None:
        """`data.<key>` as written (manifest, human_pairs, ranks); None when not set."""
        return None if self.data is None else getattr(self.data, key, None)


__all__ = [
    "ConfigData",
    "ConfigJudge",
    "ResolvedDescriber",
    "ResolvedFacts",
    "RunConfigFile",
    "TemplateFacts",
]
