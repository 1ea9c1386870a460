"""Checklist judge: decompose each prompt once, then judge every element against the description.

Two structured calls, both validated by the call layer (with its one re-ask):
1. decomposition (template `checklist_decompose`, schema `PromptChecklist`): its request
   holds only the prompt text, the template and the model, at temperature 0 and sample
   0, so its cache key is per prompt, not per item: the 13 images of a prompt share one
   decomposition (concurrent ones share one in-flight request), every repeat too;
2. element verdicts (template `checklist_judge`): one call per item (per sample, with
   repeats) whose schema has one required field per element id.
The score is the weighted share of satisfied elements in [0, 1] (`checklist_schema`);
the rationale and `details["elements"]` list every element with its verdict.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from titjudge.judges.base import Judge, SamplingJudge
from titjudge.judges.building import PROMPT_ONLY, Building, checked_template, repeated
from titjudge.judges.checklist_schema import (
    ElementType,
    PromptChecklist,
    element_key,
    render_elements,
    score_checklist,
    verdicts_schema,
)
from titjudge.judges.options import SampledOptions, reply_budget
from titjudge.judges.registry import judge_kind
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import CallMode, TextCalls
from titjudge.prompts.loader import PromptTemplate
from titjudge.records.calls import CallResult
from titjudge.records.outcomes import JudgeInput, JudgeOutcome


class ChecklistJudge(SamplingJudge):
    config: ChecklistJudgeConfig

    def __init__(
        self,
        config: ChecklistJudgeConfig,
        client: TextCalls,
        decompose: PromptTemplate,
        template: PromptTemplate,
    ):
        super().__init__(config, client, template)
        self.decompose = decompose
        self.weights = config.checklist_weights

    def kind_facts(self) -> dict[str, Any]:
        return {
            "decompose_template": self.decompose.record(),
            **super().kind_facts(),
            "weights": self.weights,
            "score": "weighted share of satisfied elements, 0-1",
        }

    async def decomposition(self, prompt: str, *, probe: CallMode) -> CallResult[PromptChecklist]:
        """The prompt's element list: cached per (prompt, template, model), never per item."""
        system, user = self.decompose.render(prompt=prompt)
        # greedy, unless the model takes only its provider's default (then the judge's is None)
        greedy = None if self.config.temperature is None else 0.0
        request = GenerateRequest(
            prompt=user, system=system, max_tokens=self.config.max_tokens, temperature=greedy
        )
        return await self.client.structured(
            request, PromptChecklist, role="judge", template=self.decompose.record(), probe=probe
        )

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        item = given.item
        split = await self.decomposition(item.prompt, probe=probe)
        if not split.ok or split.value is None:
            outcome = JudgeOutcome.failed(self.name, f"decomposition failed: {split.error}")
            _add_decomposition_usage(outcome, split)
            return outcome
        checklist = split.value
        schema = verdicts_schema(element_key(checklist))
        system, user = self.template.render(
            prompt=item.prompt, elements=render_elements(checklist), description=given.description
        )
        request = GenerateRequest(
            prompt=user,
            system=system,
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            sample=given.sample,
        )
        call = await self.client.structured(
            request, schema, role="judge", template=self.template.record(), probe=probe
        )
        if not call.ok or call.value is None:
            outcome = JudgeOutcome.failed(self.name, call.error or "no element verdicts", call)
            _add_decomposition_usage(outcome, split)
            return outcome
        try:
            scored = score_checklist(checklist, call.value, self.weights)
        except ValueError as exc:
            outcome = JudgeOutcome.failed(self.name, str(exc), call)
            _add_decomposition_usage(outcome, split)
            return outcome
        lines = scored.lines()
        counts = scored.counts
        outcome = JudgeOutcome(
            variant=self.name,
            status="ok",
            score=round(scored.score, 6),
            raw=call.raw,
            rationale=(
                f"{counts['satisfied']} of {len(lines)} elements satisfied (weighted share "
                f"{scored.score:.4f}); {counts['absent']} absent, {counts['contradicted']} contradicted, "
                f"{counts['missed_by_entity']} missed with their entity:\n" + "\n".join(lines)
            ),
            details={"elements": lines, "counts": counts, "checklist": scored.rows},
        )
        if call.reasked:
            outcome.details["reasked"] = True
        outcome.take_usage(call)
        _add_decomposition_usage(outcome, split)
        return outcome


def _add_decomposition_usage(outcome: JudgeOutcome, split: CallResult[Any]) -> None:
    """The shared decomposition counts once: on the item whose call paid for it."""
    outcome.details["decomposition_cached"] = split.cached
    outcome.note_model(split.answered_by)
    if not split.cached:
        outcome.tokens_in += split.tokens_in
        outcome.tokens_out += split.tokens_out
        outcome.add_cost(split.cost)
        outcome.latency += split.latency
        outcome.cached = False


#: what the element verdicts' template renders
ELEMENT_VARIABLES = frozenset({"prompt", "elements", "description"})
#: checklist replies list every element with a reason, so they get more room by default
CHECKLIST_MAX_TOKENS = 4096
#: weight per element type; entities weigh double because attributes and relations hang off them
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


class ChecklistJudgeConfig(SampledOptions):
    """A judge model of its own decomposes each prompt, then checks every element."""

    kind: Literal["checklist"]
    max_tokens: int = reply_budget(CHECKLIST_MAX_TOKENS)
    weights: dict[ElementType, float] | None = Field(
        None, description="weight per element type (missing types keep their defaults)"
    )
    decompose_prompt: str | None = Field(
        None,
        description="template that splits a prompt into elements (default checklist_decompose)",
    )

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

    @property
    def checklist_weights(self) -> dict[str, float]:
        return {
            **DEFAULT_CHECKLIST_WEIGHTS,
            **{str(kind): w for kind, w in (self.weights or {}).items()},
        }


@judge_kind("checklist", config=ChecklistJudgeConfig, label="Checklist-{model}")
def build_checklist(config: ChecklistJudgeConfig, building: Building) -> Judge:
    template = checked_template(config, "checklist_judge", "judge", ELEMENT_VARIABLES)
    client = building.text_client(config)
    decompose = checked_template(
        config, "checklist_decompose", "decompose", PROMPT_ONLY, given=config.decompose_prompt
    )
    return repeated(ChecklistJudge(config, client, decompose, template), config.repeats)
