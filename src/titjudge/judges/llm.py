"""TIT-Score-LLM and Self-Eval: a text model reads prompt and description, returns a verdict.

Self-Eval is the same judge with the describer's own VLM, text-only (SPEC.md §3).
"""

from __future__ import annotations

from typing import Any

from titjudge.data.records import Item
from titjudge.judges.base import Described, Judge, JudgeOutcome
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.base import GenerateRequest, ImageInput
from titjudge.models.call import ModelClient
from titjudge.prompts.loader import PromptTemplate


class LLMJudge(Judge):
    def __init__(self, name: str, client: ModelClient, template: PromptTemplate, max_tokens: int,
                 temperature: float, kind: str = "llm"):
        self.name = name
        self.client = client
        self.template = template
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.kind = kind

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "model": self.client.model, "template": self.template.record()}

    async def judge(self, item: Item, image: ImageInput | None, described: Described) -> JudgeOutcome:
        if described.text is None:
            return JudgeOutcome.failed(self.name, f"no description: {described.error}")
        system, user = self.template.render(prompt=item.prompt, description=described.text)
        request = GenerateRequest(prompt=user, system=system, max_tokens=self.max_tokens,
                                  temperature=self.temperature)
        call = await self.client.structured(request, JudgeVerdict, role="judge", template=self.template.record())
        if not call.ok or call.value is None:
            return JudgeOutcome.failed(self.name, call.error or "no verdict", call)
        return verdict_outcome(self.name, call.value, call)


def verdict_outcome(name: str, verdict: JudgeVerdict, call: Any) -> JudgeOutcome:
    outcome = JudgeOutcome(
        variant=name, status="ok", score=float(verdict.score), rationale=verdict.rationale, raw=call.raw,
        details={key: value for key in ("matches", "misses", "contradictions") if (value := getattr(verdict, key))},
    )
    if call.reasked:
        outcome.details["reasked"] = True
    outcome.take_usage(call)
    return outcome
