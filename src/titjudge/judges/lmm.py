"""The paper's "LMM Score": the VLM sees image and prompt and scores directly, no description."""

from __future__ import annotations

from typing import Any

from titjudge.data.records import Item
from titjudge.judges.base import Described, Judge, JudgeOutcome
from titjudge.judges.llm import verdict_outcome
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.base import GenerateRequest, ImageInput
from titjudge.models.call import ModelClient
from titjudge.prompts.loader import PromptTemplate


class LMMJudge(Judge):
    needs_description = False

    def __init__(self, name: str, client: ModelClient, template: PromptTemplate, max_tokens: int,
                 temperature: float):
        self.name = name
        self.client = client
        self.template = template
        self.max_tokens = max_tokens
        self.temperature = temperature

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "lmm", "model": self.client.model, "template": self.template.record()}

    async def judge(self, item: Item, image: ImageInput | None, described: Described) -> JudgeOutcome:
        if image is None:
            return JudgeOutcome.failed(self.name, "image could not be read")
        system, user = self.template.render(prompt=item.prompt)
        request = GenerateRequest(prompt=user, system=system, images=(image,), max_tokens=self.max_tokens,
                                  temperature=self.temperature)
        call = await self.client.structured(request, JudgeVerdict, role="judge", template=self.template.record())
        if not call.ok or call.value is None:
            return JudgeOutcome.failed(self.name, call.error or "no verdict", call)
        return verdict_outcome(self.name, call.value, call)
