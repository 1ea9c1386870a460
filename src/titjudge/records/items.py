"""The records every stage passes around; file formats are in docs/method.md ("Files").

Plain frozen dataclasses: cheap to build by the hundred thousand, hashable, and free of
I/O. Loaders and writers live in the sibling modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Winner = Literal["a", "b", "tie"]
ScoreStatus = Literal["ok", "failed", "fallback"]


@dataclass(frozen=True)
class Item:
    """One generated image of one prompt (a manifest line). `image` is absolute."""

    item_id: str
    prompt_id: str
    prompt: str
    image: Path
    t2i_model: str


@dataclass(frozen=True)
class HumanPair:
    """One aggregated human judgment between two images of the same prompt."""

    prompt_id: str
    item_a: str
    item_b: str
    winner: Winner
    #: the judgements that decided it (votes for a, for b, ties), where the pairs file keeps
    #: them (`data aggregate-votes` and the public sets' imports write them); not part of
    #: the pair's identity
    votes: tuple[int, int, int] | None = field(default=None, compare=False)

    @property
    def pair_id(self) -> str:
        return f"{self.item_a}|{self.item_b}"


@dataclass(frozen=True)
class Vote:
    """Annotator votes on one pair (a votes CSV row), with optional expert verdicts."""

    prompt_id: str
    item_a: str
    item_b: str
    votes_a: int
    votes_b: int
    votes_tie: int
    experts: tuple[Winner, ...] = ()

    @property
    def total(self) -> int:
        return self.votes_a + self.votes_b + self.votes_tie


@dataclass(frozen=True)
class RankRow:
    """Position of one item within its prompt (1 = best); tied items share a rank."""

    prompt_id: str
    item_id: str
    rank: float


@dataclass(frozen=True)
class ScoreRow:
    """One (item, variant) score. `score` is None unless status is ok or fallback."""

    item_id: str
    variant: str
    score: float | None
    status: ScoreStatus
