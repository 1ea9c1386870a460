"""Model leaderboard (paper Table 3) on a tiny hand case."""

from __future__ import annotations

from pathlib import Path

import pytest

from titjudge.errors import DataError
from titjudge.metrics.leaderboard import leaderboard_from_arrays
from titjudge.metrics.tables import build_eval_data
from titjudge.records.items import Item, RankRow
from titjudge.records.run_record import Leaderboard


def model_leaderboard(
    scores: dict[str, dict[str, float]], ranks: list[RankRow], items: list[Item]
) -> Leaderboard:
    """Each T2I model's average rank by humans and by each variant, as the evaluator computes
    it (`leaderboard_from_arrays` over the run's `EvalData`)."""
    data = build_eval_data([], ranks)
    vectors = {name: data.score_vector(variant) for name, variant in scores.items()}
    return leaderboard_from_arrays(vectors, data, items)


MODELS = ("X", "Y", "Z")
ITEMS = [
    Item(f"{p}{m}", p, "prompt", Path(f"/img/{p}{m}.png"), m) for p in ("p1", "p2") for m in MODELS
]
# p2 uses competition ranks (1, 1, 3) for a tie: treated as 1.5, 1.5, 3
RANKS = [
    RankRow("p1", "p1X", 1),
    RankRow("p1", "p1Y", 2),
    RankRow("p1", "p1Z", 3),
    RankRow("p2", "p2X", 1),
    RankRow("p2", "p2Y", 1),
    RankRow("p2", "p2Z", 3),
]


def test_hand_case() -> None:
    scores = {
        # p1 ranks Y1 Z2 X3; p2 ties X and Y -> 1.5, 1.5, Z3
        "v": {"p1X": 0.2, "p1Y": 0.9, "p1Z": 0.5, "p2X": 0.7, "p2Y": 0.7, "p2Z": 0.1},
        # p1Z failed: p1 ranks X1 Y2; p2 ranks Z1 Y2 X3
        "w": {"p1X": 1.0, "p1Y": 0.0, "p2X": 0.0, "p2Y": 1.0, "p2Z": 2.0},
    }
    board = model_leaderboard(scores, RANKS, ITEMS)
    assert board.models == ["X", "Y", "Z"]
    human = {m: (s.average_rank, s.rank, s.n_prompts) for m, s in board.human.items()}
    assert human == {"X": (1.25, 1.0, 2), "Y": (1.75, 2.0, 2), "Z": (3.0, 3.0, 2)}
    v = {m: (s.average_rank, s.rank) for m, s in board.variants["v"].models.items()}
    assert v == {"X": (2.25, 2.0), "Y": (1.25, 1.0), "Z": (2.5, 3.0)}
    # model ranks (1,2,3) vs (2,1,3): rho = 1 - 6 * 2 / (3 * 8)
    assert board.variants["v"].srcc == pytest.approx(0.5)
    w = {m: (s.average_rank, s.rank, s.n_prompts) for m, s in board.variants["w"].models.items()}
    assert w == {"X": (2.0, 2.5, 2), "Y": (2.0, 2.5, 2), "Z": (1.0, 1.0, 1)}
    # human (1, 2, 3) vs w (2.5, 2.5, 1): Pearson on ranks = -1.5 / sqrt(2 * 1.5)
    assert board.variants["w"].srcc == pytest.approx(-1.5 / 3**0.5)


def test_model_without_scores_and_missing_manifest_item() -> None:
    board = model_leaderboard({"v": {"p1X": 1.0, "p1Y": 0.0}}, RANKS, ITEMS)
    z = board.variants["v"].models["Z"]
    assert (z.average_rank, z.rank, z.n_prompts) == (None, None, 0)
    assert board.variants["v"].srcc == pytest.approx(1.0)  # X before Y, as humans; Z left out
    single = model_leaderboard({"v": {"p1X": 1.0}}, RANKS, ITEMS)
    assert single.variants["v"].srcc is None  # one ranked model: no correlation, not 0
    with pytest.raises(DataError, match="'p2Z' has a human rank but is not in the manifest"):
        model_leaderboard({}, RANKS, ITEMS[:-1])
