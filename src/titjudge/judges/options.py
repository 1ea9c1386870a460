"""The options every judge kind's config is built from: name and fallback for all, how to reach
a model for the kinds that use one, the reply options of sampled judges, and the score options
of verdict judges. Each kind's module declares its own config from these, holding only the
fields that kind reads; an option it does not read is refused when the config is loaded.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from titjudge.models.core.options import ModelOptions, StrictModel
from titjudge.models.core.rules import settle
from titjudge.records.names import RESERVED_NAMES
from titjudge.records.spec import parse_model_spec

ScoreMode = Literal["sampled", "expected"]
#: alternatives per token read by score_mode expected and lmm_yes when `top_logprobs` is not set
DEFAULT_TOP_LOGPROBS = 20


class JudgeOptions(StrictModel):
    """What every judge kind takes: its variant name, its kind and a fallback judge."""

    #: why a key this kind does not read is refused, where a plain "not read here" would not say
    refused: ClassVar[dict[str, str]] = {}
    #: False for judges whose scores exist only once every item is judged (pairwise win rates)
    scores_per_item: ClassVar[bool] = True

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.\-]+$", description="variant name used in every output"
    )
    kind: str
    fallback: str | None = Field(
        None, description="name of a judge whose score replaces a failed one"
    )

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in RESERVED_NAMES:
            raise ValueError(
                f"judge name {value!r} is reserved: metrics.json keeps its "
                f"{', '.join(RESERVED_NAMES)} under those names; rename the judge"
            )
        return value

    @property
    def own_model(self) -> str | None:
        """The model spec this judge names itself; None when it uses none or borrows one."""
        return None

    @model_validator(mode="after")
    def _not_own_fallback(self) -> JudgeOptions:
        if self.fallback == self.name:
            raise ValueError(f"judge {self.name!r} names itself as its fallback")
        return self


class ModelJudgeOptions(ModelOptions, JudgeOptions):
    """A judge driven by a model. Describer-bound kinds may omit `model` and then use the
    describer's VLM, reached the describer's way; the others must name one."""

    #: True for kinds that default to the describer's own VLM when `model` is omitted
    describer_bound: ClassVar[bool] = False

    model: str | None = Field(None, description="model spec '<backend>:<id>'")

    @field_validator("model")
    @classmethod
    def _valid_spec(cls, value: str | None) -> str | None:
        if value is not None:
            parse_model_spec(value)
        return value

    @property
    def own_model(self) -> str | None:
        return self.model

    @model_validator(mode="after")
    def _model_needed(self) -> ModelJudgeOptions:
        if self.model is None and not self.describer_bound:
            raise ValueError(f"judge {self.name!r} of kind {self.kind!r} needs a 'model'")
        self._check_thinking(self.model)
        self._check_batch(self.model)
        self._check_structured(self.model)
        settle(self, self.model, self)
        return self

    def reach(self, describer_model: str, describer: ModelOptions) -> tuple[str, ModelOptions]:
        """The model this judge calls and the options it is reached with: its own, or the
        describer's when it names none."""
        if self.model is None:
            return describer_model, describer
        return self.model, self


def reply_budget(default: int = 1024) -> Any:
    """The `max_tokens` field of the kinds whose reply is free text."""
    return Field(default, ge=1, description=f"reply budget (default {default})")


class SampledOptions(ModelJudgeOptions):
    """A judge whose answer is a sampled reply: its template, temperature and repeats."""

    prompt: str | None = Field(None, description="template name; default depends on kind")
    temperature: float | None = Field(
        0.0,
        ge=0,
        description="default 0 (greedy); models that take only their provider's default (OpenAI "
        "reasoning models, Claude while thinking) or are advised to keep it (Gemini 3) send none "
        "unless set; null: the provider's default",
    )
    repeats: int = Field(
        1,
        ge=1,
        le=100,
        description="run the judge N times (distinct cache keys, temperature > 0); the score "
        "is the median, every sample is stored",
    )

    @model_validator(mode="after")
    def _repeats_differ(self) -> SampledOptions:
        if self.repeats > 1 and self.temperature == 0:
            raise ValueError(
                f"judge {self.name!r}: repeats {self.repeats} at temperature 0 are copies of one "
                "greedy answer; set temperature > 0"
            )
        return self


class LogprobOptions(SampledOptions):
    """A judge that may read token log-probabilities: how many alternatives per token."""

    top_logprobs: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="alternatives read per token, default "
        f"{DEFAULT_TOP_LOGPROBS} (OpenAI-compatible servers allow at most 20; local hf: models any "
        "number)",
    )

    @property
    def logprobs_k(self) -> int:
        return self.top_logprobs or DEFAULT_TOP_LOGPROBS


class ScoredOptions(LogprobOptions):
    """A verdict judge (llm, self_eval, lmm): a score on an integer scale, sampled or expected."""

    max_tokens: int = reply_budget()
    score_mode: ScoreMode = Field(
        "sampled",
        description="'expected' scores with the probability-weighted mean of the candidate score "
        "tokens (needs a backend with log-probabilities)",
    )
    scale: tuple[int, int] | None = Field(
        None,
        description="[lo, hi] integer score scale the template asks for; default 0-100, "
        "or 1-9 for the shipped *_expected templates",
    )

    @field_validator("scale")
    @classmethod
    def _valid_scale(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and not 0 <= value[0] < value[1] <= 100:
            raise ValueError(f"scale must be [lo, hi] with 0 <= lo < hi <= 100, got {list(value)}")
        return value

    @model_validator(mode="after")
    def _logprobs_read(self) -> ScoredOptions:
        if self.top_logprobs is not None and self.score_mode != "expected":
            raise ValueError(
                f"judge {self.name!r}: 'top_logprobs' is read only by score_mode 'expected' and "
                "lmm_yes"
            )
        return self


def no_sampled_call(kind: str) -> str:
    """The reason a judge that makes no sampled call refuses `repeats`."""
    return f"{kind} judges make no sampled call, so repeats would be copies; remove 'repeats'"
