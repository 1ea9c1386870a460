"""The run configuration's schema: data, describer, judges, run settings. Unknown keys are
errors, and so is an option the judge's kind does not read (each kind declares its options in its
module in `titjudge.judges`). Relative paths are taken relative to the working directory, like
paths typed on the command line. Loading, `--set` overrides and error text live in `titjudge.config.load`.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import Field, PrivateAttr, field_validator, model_validator

from titjudge.errors import did_you_mean
from titjudge.judges.options import JudgeOptions, ModelJudgeOptions
from titjudge.judges.registry import judge_config_union
from titjudge.models.core.execution import ExecutionOptions
from titjudge.models.core.options import (
    DEFAULT_STOP_AFTER,
    ModelOptions,
    RequireModel,
    StrictModel,
    option_conflicts,
)
from titjudge.models.core.prices import rates_for
from titjudge.models.core.rules import settle
from titjudge.records.spec import ModelSpec, parse_model_spec


class DataConfig(StrictModel):
    manifest: Path = Field(
        description="JSONL manifest: item_id, prompt_id, prompt, image, t2i_model"
    )
    human_pairs: Path | None = Field(
        None, description="CSV of human pairs: prompt_id, item_a, item_b, winner"
    )
    ranks: Path | None = Field(
        None, description="CSV of human ranks; derived from the pairs when absent"
    )


class DescriberConfig(ModelOptions):
    model: str = Field(description="model spec '<backend>:<id>' of the VLM that describes images")
    prompt: str = Field("describe_paper", description="prompt template name (see titjudge/prompts)")
    max_tokens: int = Field(512, ge=1, description="the paper uses max_new_tokens=512")
    temperature: float | None = Field(
        0.0,
        ge=0,
        description="default 0 (greedy); models that take only their provider's default (OpenAI "
        "reasoning models, Claude while thinking) or are advised to keep it (Gemini 3) send none "
        "unless set; null: the provider's default. See docs/configuration.md 'Thinking'",
    )
    on_truncation: Literal["fail", "keep"] = Field(
        "fail",
        description="a description cut at max_tokens is a failure ('fail'), or is kept and marked "
        "truncated ('keep': what a fixed max_new_tokens reference run does)",
    )

    @field_validator("model")
    @classmethod
    def _valid_spec(cls, value: str) -> str:
        parse_model_spec(value)
        return value

    @property
    def spec(self) -> ModelSpec:
        return parse_model_spec(self.model)

    @model_validator(mode="after")
    def _thinking_accepted(self) -> DescriberConfig:
        self._check_thinking(self.model)
        self._check_batch(self.model)
        self._check_structured(self.model)
        settle(self, self.model, self)
        return self


if TYPE_CHECKING:
    JudgeConfig: TypeAlias = JudgeOptions
else:
    #: one judge of any registered kind, told apart by `kind`; each kind's module in
    #: titjudge.judges declares the options it reads, and no other
    JudgeConfig = judge_config_union()


class RunSettings(StrictModel):
    concurrency: int = Field(32, ge=1, description="max items in flight across the graph")
    rpm: float | None = Field(None, gt=0, description="default requests-per-minute cap per model")
    cache_dir: Path = Path(".titjudge/cache")
    out: Path = Path("runs")
    seed: int = 0
    execution: ExecutionOptions = Field(
        default_factory=ExecutionOptions,
        description="where hf:/embed: models run: in this process, or in Ray actors "
        "({backend: ray, address, actors_per_model, num_gpus_per_actor, ...}); see docs/ablation.md 'Ray'",
    )
    stop_after: int = Field(
        DEFAULT_STOP_AFTER,
        ge=0,
        description="stop a model for the run after this many requests in a row failed for a "
        "reason that will not heal (connection refused, DNS, TLS, 401, 403, 404 model not found, "
        "a missing client package): its other calls fail at once, unsent; 0: never (a spent "
        "quota still stops it); see docs/providers.md 'When a model refuses everything'",
    )
    require_model: RequireModel = Field(
        "report",
        description="a served model's reply names the model that answered: 'report' records and "
        "reports one that is not the configured model (a retired model re-routed, an alias "
        "moved); 'exact' makes such a reply a failure record, never cached (a dated snapshot "
        "of the configured name counts as the same; see titjudge.models.calls.provenance)",
    )
    budget_usd: float | None = Field(
        None,
        ge=0,
        description="a hard cap in dollars on the run's (or the whole grid's) API spend: each "
        "call reserves its worst case before it is sent and settles to the reply's cost; once "
        "a call cannot be covered nothing more is sent, the run dir is written and titjudge "
        "exits 3. Every API model must be priced (litellm's map or its 'price' option); see "
        "docs/cost-and-batch.md",
    )


def unpriced_under_budget(
    budget: float | None, uses: list[tuple[str, str, ModelOptions]]
) -> str | None:
    """Under `run.budget_usd`, the models nothing prices (litellm's map has none and no `price`
    option is set), named with who uses them, as one line; None when every model is priced
    (a local model costs $0) or no budget is set."""
    if budget is None:
        return None
    unpriced: dict[str, list[str]] = {}
    for user, model, options in uses:
        if rates_for(parse_model_spec(model), options.price) is None:
            unpriced.setdefault(model, []).append(user)
    if not unpriced:
        return None
    named = "; ".join(f"{model} ({', '.join(users)})" for model, users in unpriced.items())
    return (
        f"run.budget_usd is set, but nothing prices {named}: litellm's price map has no entry "
        "for it, so its calls' worst case cannot be reserved; give it a price option, e.g. "
        "price: {input: 2.5, output: 10} ($ per 1M tokens; 0 for a self-hosted model)"
    )


def check_model_uses(budget: float | None, uses: list[tuple[str, str, ModelOptions]]) -> None:
    """The models a config's roles call, checked together: one set of model-wide options per
    model (`option_conflicts`), and a price for each under a budget; a ValueError names the
    first problem found."""
    problem = "; ".join(option_conflicts(uses)) or unpriced_under_budget(budget, uses)
    if problem:
        raise ValueError(problem)


def check_run_name(value: str) -> str:
    """A config's name is a folder under `run.out` that keeps its runs: '.' or '..' would
    put them in run.out itself or above it."""
    if set(value) == {"."}:
        raise ValueError(
            f"name {value!r} cannot name a folder of runs under run.out; use letters or digits"
        )
    return value


class SwapNotes(StrictModel):
    """A config that keeps what the swap of a model on the command line left out of it
    (`config.swap`): said once when it loaded, written to the run's config.yaml."""

    _swapped: list[str] = PrivateAttr(default_factory=list)

    @property
    def swapped(self) -> list[str]:
        """One line per swapped section: what was left out and why (empty: nothing)."""
        return list(self._swapped)

    def keep_swapped(self, notes: list[str]) -> None:
        self._swapped = list(notes)


class RunConfig(SwapNotes):
    name: str = Field(
        pattern=r"^[A-Za-z0-9_.\-]+$",
        description="names the folder of this config's runs: <run.out>/<name>/<run id>/",
    )
    data: DataConfig | None = Field(None, description="needed by `run`; `score` works without")
    describer: DescriberConfig
    judges: list[JudgeConfig] = Field(default_factory=list)
    run: RunSettings = Field(default_factory=RunSettings)

    _run_name = field_validator("name")(check_run_name)

    def _juries_consistent(self, names: list[str]) -> None:
        _check_juries(self, names)

    @model_validator(mode="after")
    def _judges_consistent(self) -> RunConfig:
        names = [j.name for j in self.judges]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"judge names must be unique; repeated: {', '.join(dupes)}")
        for judge in self.judges:
            if judge.fallback is not None and judge.fallback not in names:
                raise ValueError(
                    f"judge {judge.name!r} falls back to unknown judge {judge.fallback!r}"
                    f"{did_you_mean(judge.fallback, names)}"
                )
        self._juries_consistent(names)
        cycle = fallback_cycle({j.name: j.fallback for j in self.judges})
        if cycle:
            raise ValueError(f"judge fallbacks form a cycle: {' -> '.join(cycle)}; break it")
        for judge in self.judges:
            borrowed = borrowed_options(judge)
            if borrowed:
                raise ValueError(
                    f"judges.{judge.name}: {judge.kind} judge {judge.name!r} names no 'model', so "
                    f"it calls the describer's model, reached the describer's way; set "
                    f"{', '.join(borrowed)} on the describer, or give the judge its own 'model'"
                )
        uses: list[tuple[str, str, ModelOptions]] = [
            ("describer", self.describer.model, self.describer)
        ] + [
            (f"judge {j.name}", j.model, j)
            for j in self.judges
            if isinstance(j, ModelJudgeOptions) and j.model is not None
        ]
        check_model_uses(self.run.budget_usd, uses)
        for judge in self.judges:  # a judge on the describer's model: checked against it
            if getattr(judge, "describer_bound", False) and getattr(judge, "model", 1) is None:
                try:
                    settle(judge, self.describer.model, self.describer)
                except ValueError as exc:
                    raise ValueError(f"judge {judge.name!r}: {exc}") from None
        later = {j.name: j.kind for j in self.judges if not j.scores_per_item}
        for judge in self.judges:
            if judge.fallback in later:
                raise ValueError(
                    f"judge {judge.name!r} falls back to {later[judge.fallback]} judge "
                    f"{judge.fallback!r}, whose win rates exist only after every item is judged; "
                    "pick a per-item judge"
                )
        return self


def jury_members_problem(
    jury: str, members: list[str], names: list[str], juries: set[str], off: Collection[str] = ()
) -> str | None:
    """Why jury `jury` cannot combine `members` (None when it can): each must be another
    judge of the run (`names`), not a jury, and not one switched off (`off`: an ablation's
    disabled columns, which would give the jury a member with no scores at all)."""
    for member in members:
        if member in off:
            return (
                f"jury {jury!r} combines {member!r}, which is switched off (enabled: false): "
                "a member with no scores; enable it or leave it out of members"
            )
        if member not in names:
            return f"jury {jury!r} names unknown judge {member!r}{did_you_mean(member, names)}"
        if member in juries:
            return f"jury {jury!r} names jury {member!r}; members are judges"
    return None


def _check_juries(config: RunConfig, names: list[str]) -> None:
    """A jury's members are other judges of the run, none a jury, and it has people to fit to."""
    juries = {j.name for j in config.judges if j.kind == "jury"}
    for judge in config.judges:
        members = getattr(judge, "members", None) if judge.kind == "jury" else None
        if members is None:
            continue
        problem = jury_members_problem(judge.name, members, names, juries)
        if problem is not None:
            raise ValueError(problem)
        if config.data is not None and config.data.human_pairs is None:
            raise ValueError(f"jury {judge.name!r} is fitted to human pairs; set data.human_pairs")


def fallback_cycle(fallbacks: dict[str, str | None]) -> list[str] | None:
    """The first cycle in name -> fallback (e.g. ['a1', 'a2', 'a1']), or None: a failed score
    falls back once, so a cycle means a judge stands in for itself."""
    for start in fallbacks:
        chain = [start]
        while (nxt := fallbacks.get(chain[-1])) is not None:
            if nxt in chain:
                return [*chain[chain.index(nxt) :], nxt]
            chain.append(nxt)
    return None


def borrowed_options(judge: JudgeOptions) -> list[str]:
    """The model options a describer-bound judge that names no model sets, which its calls would
    never read (they are the describer's); compared with the defaults, not with what was set,
    so a dumped config reloads."""
    if not isinstance(judge, ModelJudgeOptions) or judge.model is not None:
        return []
    return [
        key
        for key, field in ModelOptions.model_fields.items()
        if getattr(judge, key) != field.get_default(call_default_factory=True)
    ]
