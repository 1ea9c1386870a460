"""What judges must return: reason first (so the score is conditioned on it), a
description on every field (it becomes the provider's JSON schema)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class JudgeVerdict(BaseModel):
    """An LLM comparer's verdict on one (prompt, description) pair, or an LMM's on (prompt, image)."""

    model_config = ConfigDict(extra="ignore")

    rationale: str = Field(
        min_length=1,
        description="Two to four sentences naming the decisive matches, misses and contradictions.",
    )
    matches: list[str] = Field(default_factory=list, description="Prompt elements the image shows as asked.")
    misses: list[str] = Field(default_factory=list, description="Prompt elements the image does not show.")
    contradictions: list[str] = Field(
        default_factory=list, description="Prompt elements the image shows differently (colour, count, place...)."
    )
    score: float = Field(ge=0, le=100, description="Alignment from 0 (unrelated) to 100 (follows every element).")
