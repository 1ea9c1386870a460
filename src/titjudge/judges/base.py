"""The judge interface. A judge kind is its config model (`judges.options`, declared in the
kind's module) plus its judge method: `Judge` keeps the config it was built from, as the user
gave it and the config loader checked it, and reads its settings from there; what it adds is
what building found (the client it calls, the templates it renders). What a judge is given and
produces for one item (`JudgeInput`, `JudgeOutcome`) and what it records about itself
(`JudgeFacts`, `Provenance`) live in `titjudge.records`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from titjudge.judges.options import JudgeOptions, SampledOptions
from titjudge.models.core.clients import CallMode, TextCalls
from titjudge.prompts.loader import PromptTemplate
from titjudge.records.judge_facts import JudgeFacts, TemplateFacts
from titjudge.records.outcomes import JudgeInput, JudgeOutcome
from titjudge.records.run_record import Provenance

#: the judge config keys a variant's provenance records as its sampling settings
SAMPLING_KEYS = ("temperature", "max_tokens", "repeats", "score_mode", "scale", "top_logprobs")


class Judge(ABC):
    """A comparer column. `needs_description` is False for judges that look at the image;
    `per_item` is False for judges that score pairs (their per-item scores come later)."""

    needs_description: bool = True
    per_item: bool = True

    def __init__(self, config: JudgeOptions) -> None:
        self.config = config

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def model(self) -> str | None:
        """The model spec this judge calls; None for a judge that calls none."""
        return None

    async def judge(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        """Score one item; never raises for a model problem. An item without what the judge
        reads (its description, or its image) fails with the reason. `probe`: the calls' mode
        (`models.core.clients.CallMode`: `SEND`, or a probe that sends nothing), handed to
        every call the judge makes."""
        missing = given.missing(needs_description=self.needs_description)
        if missing is not None:
            return JudgeOutcome.failed(self.name, missing)
        return await self.score(given, probe=probe)

    @abstractmethod
    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        """Score an item that has what this judge reads."""

    def kind_facts(self) -> dict[str, Any]:
        """What this kind records beyond its name, kind and model (`JudgeFacts`' fields)."""
        return {}

    def facts(self) -> JudgeFacts:
        """What the run's config.yaml records about this judge (`resolved.judges`)."""
        return JudgeFacts(
            name=self.name, kind=self.config.kind, model=self.model, **self.kind_facts()
        )

    def provenance(self, answered_by: Iterable[str]) -> Provenance:
        """Where this variant's numbers came from: its config, its template as built and the
        models that answered its calls."""
        config = self.config.model_dump(mode="json")
        template = self.facts().template or TemplateFacts()
        thinking = config.get("thinking")
        return Provenance(
            kind=self.config.kind,
            model=self.config.own_model or self.model,
            answered_by=sorted(set(answered_by)),
            template=template.name,
            template_sha256=template.sha256,
            thinking=dict(thinking) if isinstance(thinking, dict) else None,
            sampling={k: config[k] for k in SAMPLING_KEYS if config.get(k) is not None},
            fallback=self.config.fallback,
        )


class TextJudge(Judge):
    """A judge that asks a text (or vision) model with one template."""

    config: SampledOptions

    def __init__(self, config: SampledOptions, client: TextCalls, template: PromptTemplate):
        super().__init__(config)
        self.client = client
        self.template = template

    @property
    def model(self) -> str:
        return self.client.model

    def kind_facts(self) -> dict[str, Any]:
        return {"template": self.template.record()}


class SamplingJudge(TextJudge):
    """A judge whose answer is one sampled model reply, so it can be repeated
    (`judges.repeats`): sample k sends `GenerateRequest.sample = k`, a distinct cache key and
    seed per repeat, while sample 0 is the very request a non-repeated run sends, so raising
    `repeats` later reuses what was already paid for."""


__all__ = ["SAMPLING_KEYS", "Judge", "SamplingJudge", "TextJudge"]
