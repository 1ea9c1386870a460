"""The paper's "LMM Score": the VLM sees image and prompt and scores directly, no description.

The same verdict call as the LLM judge with the image attached and no description;
`score_mode: expected` works as there (see `judges.expected`).
"""

from __future__ import annotations

from titjudge.data.records import Item
from titjudge.judges.base import Described
from titjudge.judges.llm import LLMJudge, Scoring
from titjudge.models.base import GenerateRequest, ImageInput
from titjudge.models.call import ModelClient
from titjudge.prompts.loader import PromptTemplate


class LMMJudge(LLMJudge):
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
        super().__init__(
            name, client, template, max_tokens, temperature, kind="lmm", scoring=scoring
        )

    def verdict_request(
        self, item: Item, image: ImageInput | None, described: Described, sample: int
    ) -> GenerateRequest | str:
        if image is None:
            return "image could not be read"
        system, user = self.template.render(prompt=item.prompt)
        return self._request(system, user, (image,), sample)
