"""What a built judge records about itself: `resolved.judges` in config.yaml, one `JudgeFacts`
per judge, and the variant provenance metrics.json reads from it.

A judge kind sets only the fields it has (an embedding judge its query side, a checklist judge
its two templates and weights, a repeated judge its repeats), and `doc()` writes exactly those,
in the order declared here, so a config.yaml lists what the judge was and nothing it was not.
A config.yaml an older release wrote reads the same way: every field but the name is optional
and a key this record does not know is kept.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class TemplateFacts(BaseModel):
    """A prompt template as a run recorded it (`prompts.loader.PromptTemplate.record`)."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    version: str | int | None = None
    sha256: str | None = None


class JudgeFacts(BaseModel):
    """One judge as it was built: its kind, the model it calls, its templates and the settings
    that make its score what it is."""

    model_config = ConfigDict(extra="allow")

    name: str
    kind: str | None = None
    #: the model spec the judge calls (None: a judge with no model, the lexical baseline)
    model: str | None = None
    #: the checklist judge's decomposition template
    decompose_template: TemplateFacts | None = None
    template: TemplateFacts | None = None
    #: the checklist judge's weight per element type
    weights: dict[str, float] | None = None
    #: the embedding judge's query side: 'raw' or 'instruction+query', and its instruction
    query_side: str | None = None
    instruction: str | None = None
    #: how a judge with no model scores (the lexical baseline)
    method: str | None = None
    #: a verdict judge's scoring, where it is not the default (sampled, 0-100)
    score_mode: str | None = None
    scale: list[int] | None = None
    top_logprobs: int | None = None
    repeats: int | None = None
    repeat_score: str | None = None
    #: what the score is, in words
    score: str | None = None

    def doc(self) -> dict[str, Any]:
        """The fields this judge set, as config.yaml writes them."""
        return self.model_dump(mode="json", exclude_unset=True)


__all__ = ["JudgeFacts", "TemplateFacts"]
