"""The run configuration's schema: data, describer, judges, run settings. Unknown keys are
errors. Relative paths are taken relative to the working directory, like paths typed on the
command line. Loading, `--set` overrides and error text live in `titjudge.config.load`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from titjudge.errors import did_you_mean
from titjudge.models.options import ModelOptions, StrictModel
from titjudge.models.spec import ModelSpec, parse_model_spec


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
    temperature: float = Field(0.0, ge=0)
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
        return self


JudgeKind = Literal[
    "llm", "embedding", "lmm", "self_eval", "lexical", "pairwise", "checklist", "lmm_yes"
]
ScoreMode = Literal["sampled", "expected"]
ElementType = Literal[
    "entity", "attribute", "relation", "setting", "composition", "lighting", "style", "detail"
]

#: kinds that need their own `model` (the others may use the describer's, or none)
MODEL_REQUIRED_KINDS = ("llm", "embedding", "pairwise", "checklist")
#: kinds that default to the describer's own VLM when `model` is omitted
DESCRIBER_BOUND_KINDS = ("lmm", "self_eval", "lmm_yes")
#: kinds whose score can be the probability-weighted mean of the score tokens
EXPECTED_SCORE_KINDS = ("llm", "self_eval", "lmm")
#: kinds that make no sampled model call, so repeating them would give N copies
UNREPEATABLE_KINDS = ("embedding", "lexical")
#: alternatives per token read by score_mode expected and lmm_yes when `top_logprobs` is not set
DEFAULT_TOP_LOGPROBS = 20
#: checklist replies list every element with a reason, so they get more room unless max_tokens is set
CHECKLIST_MAX_TOKENS = 4096
#: checklist weight per element type; entities weigh double because attributes and relations hang off them
DEFAULT_CHECKLIST_WEIGHTS: dict[str, float] = {
    "entity": 2.0,
    "attribute": 1.0,
    "relation": 1.0,
    "setting": 1.0,
    "composition": 1.0,
    "lighting": 1.0,
    "style": 1.0,
    "detail": 1.0,
}


class JudgeConfig(ModelOptions):
    """One comparer column. `model` may be omitted for `lmm`, `lmm_yes` and `self_eval`, which use the
    describer, and must be omitted for `lexical`, which uses no model. README "Beyond the paper" says when
    to use `pairwise`, `checklist`, `lmm_yes`, `score_mode: expected` and `repeats`."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.\-]+$", description="variant name used in every output"
    )
    kind: JudgeKind
    model: str | None = None
    prompt: str | None = Field(None, description="template name; default depends on kind")
    fallback: str | None = Field(
        None, description="name of a judge whose score replaces a failed one"
    )
    instruction: str | None = Field(
        None,
        description="embedding judges: instruction prefixed to the prompt side; None embeds raw text",
    )
    max_tokens: int = Field(
        1024, ge=1, description=f"reply budget; checklist judges default to {CHECKLIST_MAX_TOKENS}"
    )
    temperature: float = Field(0.0, ge=0)
    score_mode: ScoreMode = Field(
        "sampled",
        description="llm/self_eval/lmm: 'expected' scores with the probability-weighted mean of the "
        "candidate score tokens (needs a backend with log-probabilities)",
    )
    scale: tuple[int, int] | None = Field(
        None,
        description="llm/self_eval/lmm: [lo, hi] integer score scale the template asks for; default 0-100, "
        "or 1-9 for the shipped *_expected templates",
    )
    top_logprobs: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="score_mode expected and lmm_yes: alternatives read per token, "
        f"default {DEFAULT_TOP_LOGPROBS} (OpenAI-compatible servers allow at most 20; local hf: models any number)",
    )
    repeats: int = Field(
        1,
        ge=1,
        le=100,
        description="run the judge N times (distinct cache keys, temperature > 0); the score "
        "is the median, every sample is stored",
    )
    weights: dict[ElementType, float] | None = Field(
        None, description="checklist: weight per element type (missing types keep their defaults)"
    )
    decompose_prompt: str | None = Field(
        None,
        description="checklist: template that splits a prompt into elements (default checklist_decompose)",
    )

    @field_validator("model")
    @classmethod
    def _valid_spec(cls, value: str | None) -> str | None:
        if value is not None:
            parse_model_spec(value)
        return value

    @field_validator("weights")
    @classmethod
    def _valid_weights(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        negative = sorted(k for k, w in value.items() if w < 0)
        if negative:
            raise ValueError(f"checklist weights must be >= 0; negative: {', '.join(negative)}")
        if sum({**DEFAULT_CHECKLIST_WEIGHTS, **value}.values()) <= 0:
            raise ValueError("checklist weights are all zero; at least one element type must count")
        return value

    @field_validator("scale")
    @classmethod
    def _valid_scale(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and not 0 <= value[0] < value[1] <= 100:
            raise ValueError(f"scale must be [lo, hi] with 0 <= lo < hi <= 100, got {list(value)}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _kind_defaults(cls, data: Any) -> Any:
        """Defaults that depend on the kind are written into the config, so a dump reloads the same."""
        if (
            isinstance(data, dict)
            and data.get("kind") == "checklist"
            and data.get("max_tokens") is None
        ):
            data = {**data, "max_tokens": CHECKLIST_MAX_TOKENS}
        return data

    @property
    def logprobs_k(self) -> int:
        return self.top_logprobs or DEFAULT_TOP_LOGPROBS

    @model_validator(mode="after")
    def _model_needed(self) -> JudgeConfig:
        if self.model is None and self.kind in MODEL_REQUIRED_KINDS:
            raise ValueError(f"judge {self.name!r} of kind {self.kind!r} needs a 'model'")
        if self.model is not None and self.kind == "lexical":
            raise ValueError(f"judge {self.name!r} is lexical and uses no model; remove 'model'")
        if self.fallback == self.name:
            raise ValueError(f"judge {self.name!r} names itself as its fallback")
        self._check_modes()
        self._check_thinking(self.model)
        return self

    def _check_modes(self) -> None:
        """Options that only some kinds read are errors elsewhere, never silently ignored."""
        name, kind = self.name, self.kind
        if self.score_mode == "expected" and kind not in EXPECTED_SCORE_KINDS:
            raise ValueError(
                f"judge {name!r}: score_mode 'expected' applies to llm, self_eval and lmm judges, "
                f"not {kind!r}"
            )
        if self.scale is not None and kind not in EXPECTED_SCORE_KINDS:
            raise ValueError(
                f"judge {name!r}: 'scale' applies to llm, self_eval and lmm judges, not {kind!r}"
            )
        if self.top_logprobs is not None and self.score_mode != "expected" and kind != "lmm_yes":
            raise ValueError(
                f"judge {name!r}: 'top_logprobs' is read only by score_mode 'expected' and lmm_yes"
            )
        if self.repeats > 1 and kind in UNREPEATABLE_KINDS:
            raise ValueError(
                f"judge {name!r}: {kind} judges make no sampled call, so repeats would be copies; "
                "remove 'repeats'"
            )
        if self.repeats > 1 and self.temperature == 0:
            raise ValueError(
                f"judge {name!r}: repeats {self.repeats} at temperature 0 are copies of one greedy "
                "answer; set temperature > 0"
            )
        for key in ("weights", "decompose_prompt"):
            if getattr(self, key) is not None and kind != "checklist":
                raise ValueError(
                    f"judge {name!r}: {key!r} applies to checklist judges, not {kind!r}"
                )
        if kind == "pairwise" and self.fallback is not None:
            raise ValueError(
                f"judge {name!r}: a pairwise judge scores win rates over pairs; it takes no fallback"
            )

    @property
    def checklist_weights(self) -> dict[str, float]:
        return {
            **DEFAULT_CHECKLIST_WEIGHTS,
            **{str(kind): w for kind, w in (self.weights or {}).items()},
        }


class RunSettings(StrictModel):
    concurrency: int = Field(32, ge=1, description="max items in flight across the graph")
    rpm: float | None = Field(None, gt=0, description="default requests-per-minute cap per model")
    cache_dir: Path = Path(".titjudge/cache")
    out: Path = Path("runs")
    seed: int = 0


class RunConfig(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    data: DataConfig | None = Field(None, description="needed by `run`; `score` works without")
    describer: DescriberConfig
    judges: list[JudgeConfig] = Field(default_factory=list)
    run: RunSettings = Field(default_factory=RunSettings)

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
        pairwise = {j.name for j in self.judges if j.kind == "pairwise"}
        for judge in self.judges:
            if judge.fallback in pairwise:
                raise ValueError(
                    f"judge {judge.name!r} falls back to pairwise judge {judge.fallback!r}, whose win rates "
                    "exist only after every item is judged; pick a per-item judge"
                )
        return self
