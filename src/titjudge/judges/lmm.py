"""The paper's "LMM Score": the VLM sees image and prompt and scores directly, no description.

`score_mode: expected` works as for the LLM judge (see `judges.expected`).
"""

from __future__ import annotations

from typing import Any

from titjudge.data.records import Item
from titjudge.judges.base import Described, JudgeOutcome, SamplingJudge
from titjudge.judges.llm import Scoring, ask_verdict
from titjudge.models.base import GenerateRequest, ImageInput
from titjudge.models.call import ModelClient
from titjudge.prompts.loader import PromptTemplate


class LMMJudge(SamplingJudge):
    needs_description = False

    def __init__(
        self,
        name: str,
        client: ModelClient,
        template: PromptTemplate,
        max_tokens: int,
        temperature: float,
        scoring: Scoring | None = None,
    ):
        self.name = name
        self.client = client
        self.template = template
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.scoring = scoring or Scoring()

    def record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "lmm",
            "model": self.client.model,
            "template": self.template.record(),
            **self.scoring.record(),
        }

    async def judge_sample(
        self, item: Item, image: ImageInput | None, described: Described, sample: int
    ) -> JudgeOutcome:
        if image is None:
            return JudgeOutcome.failed(self.name, "image could not be read")
        system, user = self.template.render(prompt=item.prompt)
        request = GenerateRequest(
            prompt=user,
            system=system,
            images=(image,),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            top_logprobs=self.scoring.request_logprobs,
            sample=sample,
        )
        return await ask_verdict(self.name, self.client, request, self.template, self.scoring)
