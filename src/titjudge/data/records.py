"""The records every stage passes around, now kept low in `titjudge.records.items` (so that
`records`, `metrics` and `report` need no package above them); re-exported here under their
old import path."""

from __future__ import annotations

from titjudge.records.items import (
    HumanPair,
    Item,
    RankRow,
    ScoreRow,
    ScoreStatus,
    Vote,
    Winner,
)

__all__ = ["HumanPair", "Item", "RankRow", "ScoreRow", "ScoreStatus", "Vote", "Winner"]
