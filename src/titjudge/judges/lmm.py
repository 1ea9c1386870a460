"""The paper's "LMM Score": the VLM sees image and prompt and scores directly, no description.

The same verdict call as the LLM judge with the image attached and no description;
`score_mode: expected` works as there (see `judges.expected`).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from titjudge.judges.base import Judge
from titjudge.judges.building import Building
from titjudge.judges.llm import LLMJudge, verdict_judge
from titjudge.judges.options import ScoredOptions
from titjudge.judges.registry import judge_kind
from titjudge.models.core.base import GenerateRequest
from titjudge.records.outcomes import JudgeInput


class LMMJudge(LLMJudge):
    needs_description = False
    templates = ("lmm_score", "lmm_expected")
    role = "lmm"

    def verdict_request(self, given: JudgeInput) -> GenerateRequest:
        system, user = self.template.render(prompt=given.item.prompt)
        return self._request(system, user, (given.picture,), given.sample)


class LMMJudgeConfig(ScoredOptions):
    """LMM Score: the describer's own VLM sees image and prompt, unless `model` names another."""

    describer_bound: ClassVar[bool] = True
    kind: Literal["lmm"]


@judge_kind("lmm", config=LMMJudgeConfig, label="LMM Score")
def build_lmm(config: LMMJudgeConfig, building: Building) -> Judge:
    return verdict_judge(LMMJudge, config, building)
