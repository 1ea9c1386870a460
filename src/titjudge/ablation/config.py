"""Ablation configuration (the paper's Table 4): VLM rows x comparer columns, one YAML.

Rows are describers (`DescriberConfig` plus a name and a label); columns are judges
(a judge kind's config plus a label and an on/off switch). `lmm` and `self_eval` columns take no
model: in each row they use that row's VLM, reached the row's way. Each row runs as an
ordinary `RunConfig` (see `row_run_config`), so everything `titjudge run` does (cache,
retries, run dir) holds per row.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import Field, create_model, field_validator, model_validator

from titjudge.config.load import load_configured, validate_config
from titjudge.config.schema import (
    DataConfig,
    DescriberConfig,
    JudgeConfig,
    RunConfig,
    RunSettings,
    SwapNotes,
    check_model_uses,
    check_run_name,
    fallback_cycle,
    jury_members_problem,
)
from titjudge.errors import did_you_mean
from titjudge.judges.options import JudgeOptions, ModelJudgeOptions
from titjudge.judges.registry import kinds, tagged_union
from titjudge.models.core.options import ModelOptions
from titjudge.models.preflight import ModelUse, answered_models, check_models
from titjudge.records.spec import parse_model_spec

NAME_PATTERN = r"^[A-Za-z0-9_.\-]+$"


def _no_dots(name: str, what: str) -> None:
    """Rows and columns are addressed as `--set describers.<name>.enabled=false`: no dots."""
    if "." in name:
        raise ValueError(
            f"{what} name {name!r} contains '.', so `--set {what}s.{name}...` could not address it; "
            f"use '-' or '_' instead (e.g. {name.replace('.', '')!r})"
        )


class AblationDescriber(DescriberConfig):
    """One table row: a VLM that describes every image; its LMM Score and Self-Eval use it too."""

    name: str = Field(
        pattern=NAME_PATTERN, description="row id: run dir rows/<name>/, used in --set"
    )
    label: str | None = Field(None, description="row heading in tables (default: name)")
    enabled: bool = Field(True, description="false leaves the row out of the grid")

    @field_validator("name")
    @classmethod
    def _addressable(cls, value: str) -> str:
        _no_dots(value, "describer")
        return value

    @property
    def heading(self) -> str:
        return self.label or self.name


class ComparerColumn(JudgeOptions):
    """What a judge becomes as a table column: a heading and an on/off switch. Each judge kind's
    config extended by this is one comparer kind (`AblationComparer`).

    Describer-bound kinds (lmm, self_eval, lmm_yes) take no model and no placement options:
    in each row they are that row's VLM, reached the row's way."""

    label: str | None = Field(None, description="column heading (default from kind and model)")
    enabled: bool = Field(True, description="false switches the column off")

    @model_validator(mode="after")
    def _row_bound(self) -> ComparerColumn:
        _no_dots(self.name, "comparer")
        if kinds()[self.kind].describer_bound and isinstance(self, ModelJudgeOptions):
            if self.model is not None:
                raise ValueError(
                    f"comparer {self.name!r} ({self.kind}) uses each row's own VLM; remove 'model'"
                )
            # compared with the defaults, not with what was set, so a dumped config reloads
            placed = [
                key
                for key, field in ModelOptions.model_fields.items()
                if getattr(self, key) != field.get_default(call_default_factory=True)
            ]
            if placed:
                raise ValueError(
                    f"comparer {self.name!r} ({self.kind}) is reached the way each row's describer is; "
                    f"set {', '.join(placed)} on the describers, not here"
                )
        return self


if TYPE_CHECKING:
    AblationComparer: TypeAlias = ComparerColumn
else:
    #: one table column: a judge of any registered kind, with a heading and a switch
    AblationComparer = tagged_union(
        [
            create_model(f"Comparer{kind.config.__name__}", __base__=(kind.config, ComparerColumn))
            for kind in kinds().values()
        ]
    )


class AblationConfig(SwapNotes):
    name: str = Field(
        pattern=NAME_PATTERN,
        description="names the folder of its grids: <run.out>/<name>/<run id>/",
    )
    data: DataConfig = Field(description="manifest and human pairs shared by every row")
    describers: list[AblationDescriber] = Field(description="table rows: one VLM backbone each")
    comparers: list[AblationComparer] = Field(description="table columns, in order")
    run: RunSettings = Field(default_factory=lambda: RunSettings.model_validate({}))
    bootstrap: int = Field(
        1000, ge=0, description="bootstrap resamples of prompts for CIs (0 = off)"
    )

    _run_name = field_validator("name")(check_run_name)

    @field_validator("describers")
    @classmethod
    def _some_rows(cls, value: list[AblationDescriber]) -> list[AblationDescriber]:
        if not value:
            raise ValueError("list at least one describer (a VLM; one table row each)")
        _unique([d.name for d in value], "describer names")
        if not any(d.enabled for d in value):
            raise ValueError("every describer is disabled; enable at least one")
        return value

    @field_validator("comparers")
    @classmethod
    def _some_columns(cls, value: list[AblationComparer]) -> list[AblationComparer]:
        if not value:
            raise ValueError("list at least one comparer (one table column each)")
        _unique([c.name for c in value], "comparer names")
        if not any(c.enabled for c in value):
            raise ValueError("every comparer is disabled; enable at least one")
        enabled = [c.name for c in value if c.enabled]
        for comparer in value:
            if (
                comparer.enabled
                and comparer.fallback is not None
                and comparer.fallback not in enabled
            ):
                raise ValueError(
                    f"comparer {comparer.name!r} falls back to {comparer.fallback!r}, which is not an "
                    f"enabled comparer{did_you_mean(comparer.fallback, enabled)}"
                )
        juries = {c.name for c in value if c.kind == "jury"}
        off = {c.name for c in value if not c.enabled}
        for comparer in value:
            members = getattr(comparer, "members", None)
            if comparer.enabled and comparer.kind == "jury" and members is not None:
                problem = jury_members_problem(comparer.name, members, enabled, juries, off)
                if problem is not None:
                    raise ValueError(problem)
        cycle = fallback_cycle({c.name: c.fallback for c in value if c.enabled})
        if cycle:
            raise ValueError(f"comparer fallbacks form a cycle: {' -> '.join(cycle)}; break it")
        _unique(column_labels(value).values(), "column labels (set 'label' to tell them apart)")
        return value

    @model_validator(mode="after")
    def _needs_humans(self) -> AblationConfig:
        if self.data.human_pairs is None:
            raise ValueError(
                "data.human_pairs is required: the ablation's tables compare against humans"
            )
        uses = [(use.user, use.model, use.options) for use in ablation_model_uses(self)]
        check_model_uses(self.run.budget_usd, uses)
        return self

    @property
    def rows(self) -> list[AblationDescriber]:
        return [d for d in self.describers if d.enabled]

    @property
    def columns(self) -> list[AblationComparer]:
        return [c for c in self.comparers if c.enabled]

    def labels(self) -> dict[str, str]:
        """Column name -> heading, for the enabled columns."""
        return column_labels(self.comparers)


def _unique(names: Any, what: str) -> None:
    names = list(names)
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{what} must be unique; repeated: {', '.join(repr(d) for d in dupes)}")


def column_labels(comparers: list[AblationComparer]) -> dict[str, str]:
    """Headings as the paper writes them, from each kind's registered heading: 'TIT-Score' (one
    embedding model) or 'TIT-Score (<model>)' (several), 'TIT-Score-<model>' for LLM judges,
    unless labelled."""
    enabled = [c for c in comparers if c.enabled]
    registered = kinds()
    labels = {}
    for comparer in enabled:
        model = comparer.own_model
        short = parse_model_spec(model).short_name if model else ""
        several = sum(c.kind == comparer.kind for c in enabled) > 1
        labels[comparer.name] = comparer.label or registered[comparer.kind].heading(short, several)
    return labels


def row_run_config(config: AblationConfig, row: AblationDescriber) -> RunConfig:
    """The ordinary run one row is: same data, cache and settings, all enabled columns as judges."""
    # only what the user set is passed on, so validators that read `model_fields_set` see the same
    describer = DescriberConfig.model_validate(
        row.model_dump(include=set(DescriberConfig.model_fields), exclude_unset=True)
    )
    column_only = set(ComparerColumn.model_fields) - set(JudgeOptions.model_fields)
    judges = [
        validate_config(
            c.model_dump(exclude=column_only, exclude_unset=True), JudgeConfig, config.name
        )
        for c in config.columns
    ]
    # validated as a run's config: what the grid's own checks let through and a run refuses
    # is one ConfigError naming the row, never a traceback
    run: RunConfig = validate_config(
        {
            "name": f"{config.name}.{row.name}",
            "data": config.data,
            "describer": describer,
            "judges": judges,
            "run": config.run,
        },
        RunConfig,
        f"{config.name}: row {row.name!r}",
    )
    # what swaps on the command line left out of this row and of the columns (config.swap)
    run.keep_swapped(
        [n for n in config.swapped if n.startswith((f"describers.{row.name}.", "comparers."))]
    )
    return run


def ablation_model_uses(config: AblationConfig) -> list[ModelUse]:
    """Every enabled row's VLM (its lmm and self_eval columns use it too), then every enabled
    column's own model."""
    uses = [ModelUse(row.model, row, f"row {row.name}") for row in config.rows]
    for column in config.columns:
        if isinstance(column, ModelJudgeOptions) and column.model is not None:
            uses.append(ModelUse(column.model, column, f"comparer {column.name}"))
    return uses


def preflight_ablation(config: AblationConfig, source: str) -> list[str]:
    """Raise one `ConfigError` naming everything the grid's models are missing, before any row
    runs (the library's `run_ablation_async` skips this and records a row that cannot run),
    with the data files' and templates' problems in the same line. Returns the notes to show
    before the grid starts (some images missing)."""
    from titjudge.run.preflight import data_problems, template_problems

    templates = [(row.prompt, f"describers.{row.name}.prompt") for row in config.rows]
    for column in config.columns:
        name = getattr(column, "prompt", None)
        if isinstance(name, str):
            templates.append((name, f"comparers.{column.name}.prompt"))
    notes: list[str] = []
    others = data_problems(config.data, notes) + template_problems(templates)
    check_models(ablation_model_uses(config), source, answered_models(config.run.cache_dir), others)
    return notes


def load_ablation_config(path: str | Path, overrides: list[str] | None = None) -> AblationConfig:
    """Load, override (`describers.gpt-4o.enabled=false`) and validate an ablation config."""
    config: AblationConfig = load_configured(path, overrides, AblationConfig, "ablation")
    return config
