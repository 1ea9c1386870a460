"""What judges must return: reason first (so the score is conditioned on it), a
description on every field (it becomes the provider's JSON schema)."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model


class JudgeVerdict(BaseModel):
    """An LLM comparer's verdict on one (prompt, description) pair, or an LMM's on (prompt, image)."""

    model_config = ConfigDict(extra="ignore")

    rationale: str = Field(
        min_length=1,
        description="Two to four sentences naming the decisive matches, misses and contradictions.",
    )
    matches: list[str] = Field(
        default_factory=list, description="Prompt elements the image shows as asked."
    )
    misses: list[str] = Field(
        default_factory=list, description="Prompt elements the image does not show."
    )
    contradictions: list[str] = Field(
        default_factory=list,
        description="Prompt elements the image shows differently (colour, count, place...).",
    )
    # strict: a JSON number only; `true` or "85" is a malformed verdict, never a score
    score: float = Field(
        strict=True,
        ge=0,
        le=100,
        description="Alignment from 0 (unrelated) to 100 (follows every element).",
    )


class ScoreVerdict(BaseModel):
    """A verdict of a rationale and a score alone: what the paper's comparer wording and the
    LMM-score templates ask for (`{"rationale": ..., "score": <integer>}`)."""

    model_config = ConfigDict(extra="ignore", title="ScoreVerdict")

    rationale: str = Field(
        min_length=1, description="One to four sentences on what matches, is missing or differs."
    )
    score: int = Field(
        strict=True, ge=0, le=100, description="Alignment from 0 (unrelated) to 100, an integer."
    )

    # what a full verdict lists, which this one does not ask for
    @property
    def matches(self) -> list[str]:
        return []

    @property
    def misses(self) -> list[str]:
        return []

    @property
    def contradictions(self) -> list[str]:
        return []


@lru_cache(maxsize=32)
def verdict_schema(lo: int, hi: int, short: bool = False) -> type[JudgeVerdict | ScoreVerdict]:
    """`JudgeVerdict` with the score bounded to the template's scale; `short`: the
    `ScoreVerdict` a template asking for only a rationale and an integer score is sent.

    The default 0-100 scale is `JudgeVerdict` itself, so its schema and therefore every
    existing cache key stay as they were.
    """
    base: type[JudgeVerdict | ScoreVerdict] = ScoreVerdict if short else JudgeVerdict
    if (lo, hi) == (0, 100):
        return base
    score = (
        int if short else float,
        Field(
            strict=True,
            ge=lo,
            le=hi,
            description=f"Alignment from {lo} (unrelated) to {hi} (follows every "
            "element), an integer.",
        ),
    )
    return create_model(f"{base.__name__}{lo}to{hi}", __base__=base, score=score)


class PairReply(BaseModel):
    """A pairwise judge's verdict: which of two descriptions follows the prompt better."""

    # the schema's title, which names it to providers and is part of every pairwise call's
    # cache key (as is this docstring, its description); the verdict a run records on a human
    # pair is `records.pairs.PairVerdict`
    model_config = ConfigDict(extra="ignore", title="PairVerdict")

    rationale: str = Field(
        min_length=1,
        description="Two to four sentences on the decisive differences between the two descriptions.",
    )
    winner: Literal["first", "second", "tie"] = Field(
        description="'first' or 'second' for the description whose image follows the prompt better; "
        "'tie' only when neither is better."
    )
