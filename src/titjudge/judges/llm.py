"""TIT-Score-LLM and Self-Eval: a text model reads prompt and description, returns a verdict.

Self-Eval is the same judge with the describer's own VLM, text-only (docs/method.md,
'The ablation'). With `score_mode: expected` the score is the probability-weighted mean
of the score tokens (see `judges.expected`) instead of the sampled number, which is kept
in `details`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from titjudge.judges.base import Judge, SamplingJudge
from titjudge.judges.building import (
    Building,
    checked_template,
    needs_logprobs,
    needs_vision,
    repeated,
)
from titjudge.judges.expected import ExpectedScoreError, expected_score
from titjudge.judges.options import ScoredOptions
from titjudge.judges.registry import judge_kind
from titjudge.judges.schemas import JudgeVerdict, ScoreVerdict, verdict_schema
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import CallMode, TextCalls
from titjudge.prompts.loader import PromptTemplate
from titjudge.records.calls import CallResult
from titjudge.records.image_input import ImageInput
from titjudge.records.outcomes import JudgeInput, JudgeOutcome


@dataclass(frozen=True)
class Scoring:
    """How a verdict becomes a score: its scale, and sampled number or expectation."""

    mode: str = "sampled"
    lo: int = 0
    hi: int = 100
    top_logprobs: int = 20
    #: the template asks for only a rationale and an integer score (`SHORT_REPLIES`)
    short: bool = False

    @property
    def schema(self) -> type[JudgeVerdict | ScoreVerdict]:
        return verdict_schema(self.lo, self.hi, self.short)

    @property
    def request_logprobs(self) -> int:
        """top_logprobs to ask for: none in sampled mode, so its cache keys stay as they were."""
        return self.top_logprobs if self.mode == "expected" else 0

    def record(self) -> dict[str, Any]:
        """Nothing for the default (sampled, 0-100), so existing runs record what they always did."""
        if self.mode == "sampled" and (self.lo, self.hi) == (0, 100):
            return {}
        found: dict[str, Any] = {"score_mode": self.mode, "scale": [self.lo, self.hi]}
        if self.mode == "expected":
            found["top_logprobs"] = self.top_logprobs
        return found


class LLMJudge(SamplingJudge):
    """Reads the prompt and the description (text only) and asks for a verdict."""

    config: ScoredOptions
    #: the default templates, sampled and expected mode, and the role they must have
    templates: ClassVar[tuple[str, str]] = ("judge_similarity", "judge_expected")
    role: ClassVar[str] = "judge"

    def __init__(
        self,
        config: ScoredOptions,
        client: TextCalls,
        template: PromptTemplate,
        scoring: Scoring | None = None,
    ):
        super().__init__(config, client, template)
        self.scoring = scoring or Scoring()

    def kind_facts(self) -> dict[str, Any]:
        return {**super().kind_facts(), **self.scoring.record()}

    def verdict_request(self, given: JudgeInput) -> GenerateRequest:
        """The request for one sample of an item that has a description."""
        system, user = self.template.render(prompt=given.item.prompt, description=given.description)
        return self._request(system, user, (), given.sample)

    def _request(
        self, system: str | None, user: str, images: tuple[ImageInput, ...], sample: int
    ) -> GenerateRequest:
        return GenerateRequest(
            prompt=user,
            system=system,
            images=images,
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            top_logprobs=self.scoring.request_logprobs,
            sample=sample,
        )

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        return await ask_verdict(
            self.name,
            self.client,
            self.verdict_request(given),
            self.template,
            self.scoring,
            probe=probe,
        )


async def ask_verdict(
    name: str,
    client: TextCalls,
    request: GenerateRequest,
    template: PromptTemplate,
    scoring: Scoring,
    *,
    probe: CallMode,
) -> JudgeOutcome:
    """One structured verdict call, scored the configured way; failures become records."""
    call = await client.structured(
        request, scoring.schema, role="judge", template=template.record(), probe=probe
    )
    if not call.ok or call.value is None:
        return JudgeOutcome.failed(name, call.error or "no verdict", call)
    outcome = verdict_outcome(name, call.value, call)
    if scoring.mode != "expected":
        return outcome
    if not call.logprobs:
        return _failed_with(
            outcome, "the backend returned no log-probabilities for an expected score"
        )
    try:
        expected = expected_score(call.logprobs, call.value.score, scoring.lo, scoring.hi)
    except ExpectedScoreError as exc:
        return _failed_with(outcome, f"expected score: {exc}")
    outcome.score = round(expected.value, 6)
    outcome.details.update(expected.details())
    return outcome


def _failed_with(outcome: JudgeOutcome, error: str) -> JudgeOutcome:
    """Keep the verdict's usage, raw text and rationale, but no score."""
    outcome.status, outcome.error = "failed", error
    outcome.details["sampled_score"] = outcome.score
    outcome.score = None
    return outcome


def verdict_outcome(
    name: str, verdict: JudgeVerdict | ScoreVerdict, call: CallResult[Any]
) -> JudgeOutcome:
    outcome = JudgeOutcome(
        variant=name,
        status="ok",
        score=float(verdict.score),
        rationale=verdict.rationale,
        raw=call.raw,
        details={
            key: value
            for key in ("matches", "misses", "contradictions")
            if (value := getattr(verdict, key))
        },
    )
    if call.reasked:
        outcome.details["reasked"] = True
    outcome.take_usage(call)
    return outcome


#: the scale a shipped template asks for, where it is not the default 0-100
TEMPLATE_SCALES = {"judge_expected": (1, 9), "lmm_expected": (1, 9)}
#: shipped templates whose text asks for only `{"rationale", "score": <integer>}`: they are
#: sent with that schema (`ScoreVerdict`), not the full verdict's (another template, a
#: user's own included, gets the full verdict: rationale, matches, misses, contradictions,
#: score)
SHORT_REPLIES = frozenset({"judge_paper", "lmm_score", "lmm_expected"})


class LLMJudgeConfig(ScoredOptions):
    """TIT-Score-LLM: a text model of its own reads prompt and description."""

    kind: Literal["llm"]


class SelfEvalJudgeConfig(ScoredOptions):
    """Self-Eval: the describer's own VLM, text-only, unless `model` names another."""

    describer_bound: ClassVar[bool] = True
    kind: Literal["self_eval"]


def scoring_for(config: ScoredOptions, template: PromptTemplate) -> Scoring:
    lo, hi = config.scale or TEMPLATE_SCALES.get(template.name, (0, 100))
    return Scoring(
        mode=config.score_mode,
        lo=lo,
        hi=hi,
        top_logprobs=config.logprobs_k,
        short=template.name in SHORT_REPLIES,
    )


def verdict_judge(judge_type: type[LLMJudge], config: ScoredOptions, building: Building) -> Judge:
    """A verdict judge of `judge_type` with its template (the type's sampled or expected
    default unless the config names one), client and scoring, checked: vision for a judge
    that looks at the image, log-probabilities in expected mode."""
    sampled, expected = judge_type.templates
    default = expected if config.score_mode == "expected" else sampled
    template = checked_template(config, default, judge_type.role)
    client = building.text_client(config)
    if not judge_type.needs_description:
        needs_vision(config, client)
    if config.score_mode == "expected":
        needs_logprobs(config, client, "score_mode 'expected'", "score_mode=sampled")
    judge = judge_type(config, client, template, scoring_for(config, template))
    return repeated(judge, config.repeats)


def _build_text_verdict(config: ScoredOptions, building: Building) -> Judge:
    return verdict_judge(LLMJudge, config, building)


judge_kind("llm", config=LLMJudgeConfig, label="TIT-Score-{model}")(_build_text_verdict)
judge_kind("self_eval", config=SelfEvalJudgeConfig, label="Self-Eval")(_build_text_verdict)
