"""The judge interface (`Judge`, `SamplingJudge`); what a judge produces for one item
(`JudgeOutcome`, `Described`) lives in `titjudge.records.outcomes`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from titjudge.models.core.clients import CallMode
from titjudge.records.image_input import ImageInput
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeOutcome


class Judge(ABC):
    """A comparer column. `needs_description` is False for judges that look at the image;
    `per_item` is False for judges that score pairs (their per-item scores come later)."""

    name: str
    needs_description: bool = True
    per_item: bool = True

    @abstractmethod
    async def judge(
        self,
        item: Item,
        image: ImageInput | None,
        described: Described,
        *,
        probe: CallMode,
    ) -> JudgeOutcome:
        """Score one item; never raises for a model problem. `probe`: the calls' mode
        (`models.core.clients.CallMode`: `SEND`, or a probe that sends nothing), handed to
        every call the judge makes."""

    def record(self) -> dict[str, Any]:
        """What the run's resolved config records about this judge."""
        return {"name": self.name}


class SamplingJudge(Judge):
    """A judge whose answer is one sampled model reply, so it can be repeated.

    Sample k sends `GenerateRequest.sample = k`: a distinct cache key (and seed) per repeat,
    while sample 0 is the very request a non-repeated run sends, so raising `repeats`
    later reuses what was already paid for.
    """

    async def judge(
        self,
        item: Item,
        image: ImageInput | None,
        described: Described,
        *,
        probe: CallMode,
    ) -> JudgeOutcome:
        return await self.judge_sample(item, image, described, 0, probe=probe)

    @abstractmethod
    async def judge_sample(
        self,
        item: Item,
        image: ImageInput | None,
        described: Described,
        sample: int,
        *,
        probe: CallMode,
    ) -> JudgeOutcome:
        """Score one item with repeat index `sample`; never raises for a model problem."""


__all__ = ["Judge", "SamplingJudge"]
