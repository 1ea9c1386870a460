"""Per-prompt SRCC / KRCC: hand-computed values, skipped prompts, agreement with scipy."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from titjudge.metrics.correlation import prompt_correlations
from titjudge.metrics.tables import build_eval_data
from titjudge.records.items import HumanPair, RankRow


def rank_correlations(scores: dict[str, float], ranks: list[RankRow]) -> SimpleNamespace:
    """Mean per-prompt SRCC and KRCC of one variant's scores, as the evaluator computes them
    (`prompt_correlations` over the run's `EvalData`)."""
    data = build_eval_data([], ranks)
    srcc, krcc = prompt_correlations(data.score_vector(scores), data)
    return SimpleNamespace(
        srcc=srcc.mean, krcc=krcc.mean, n_prompts=srcc.n_prompts, n_prompts_skipped=srcc.n_skipped
    )


def ranks_of(prompt: str, **ranks: float) -> list[RankRow]:
    return [RankRow(prompt, f"{prompt}{item}", rank) for item, rank in ranks.items()]


def scores_of(prompt: str, **scores: float) -> dict[str, float]:
    return {f"{prompt}{item}": score for item, score in scores.items()}


def test_hand_computed_means_and_skips() -> None:
    ranks = (
        ranks_of("p1", a=1, b=2, c=3, d=4)  # perfect agreement
        + ranks_of("p2", a=1, b=2.5, c=2.5, d=4)  # human tie, metric reversed
        + ranks_of("p3", a=1, b=2, c=3)  # constant scores: skipped
        + ranks_of("p4", a=1)  # one image: skipped
        + ranks_of("p5", a=1.5, b=1.5)  # constant human ranks: skipped
        + ranks_of("p6", a=1, b=2, c=3)  # c failed: correlate a, b only
    )
    scores = {
        **scores_of("p1", a=4, b=3, c=2, d=1),
        **scores_of("p2", a=1, b=2, c=3, d=4),
        **scores_of("p3", a=5, b=5, c=5),
        **scores_of("p4", a=1),
        **scores_of("p5", a=1, b=2),
        **scores_of("p6", a=2, b=1),
    }
    # p2 by hand: rank(x) = 1,2,3,4 vs rank(-human) = 4,2.5,2.5,1 -> rho = -4.5/sqrt(5*4.5)
    rho_p2 = -4.5 / math.sqrt(5 * 4.5)
    # p2 tau-b: 5 discordant pairs, 1 pair tied in y only: -5 / sqrt(6 * 5)
    tau_p2 = -5 / math.sqrt(30)
    result = rank_correlations(scores, ranks)
    assert (result.n_prompts, result.n_prompts_skipped) == (3, 3)
    assert result.srcc == pytest.approx((1 + rho_p2 + 1) / 3, abs=1e-12)
    assert result.krcc == pytest.approx((1 + tau_p2 + 1) / 3, abs=1e-12)


def test_skipped_prompts_are_nan_not_zero() -> None:
    ranks = ranks_of("p1", a=1, b=2, c=3) + ranks_of("p2", a=1, b=2)
    data = build_eval_data([HumanPair("p0", "x", "y", "a")], ranks)
    srcc, krcc = prompt_correlations(data.score_vector(scores_of("p1", a=3, b=2, c=1)), data)
    assert data.prompt_ids == ["p0", "p1", "p2"]
    # p0 has no ranking (not considered), p1 defined, p2 unscored (skipped)
    assert list(srcc.considered) == [False, True, True]
    assert math.isnan(srcc.values[0]) and srcc.values[1] == pytest.approx(1.0)
    assert math.isnan(srcc.values[2]) and math.isnan(krcc.values[2])
    assert (srcc.n_prompts, srcc.n_skipped, srcc.mean) == (1, 1, pytest.approx(1.0))


def test_empty_input_is_none() -> None:
    result = rank_correlations({}, [])
    assert (result.srcc, result.krcc, result.n_prompts, result.n_prompts_skipped) == (
        None,
        None,
        0,
        0,
    )
    all_constant = rank_correlations(scores_of("p", a=1, b=1), ranks_of("p", a=1, b=2))
    assert (all_constant.srcc, all_constant.n_prompts_skipped) == (None, 1)


def test_matches_scipy_with_ties_and_missing_scores() -> None:
    rng = np.random.default_rng(7)
    ranks: list[RankRow] = []
    scores: dict[str, float] = {}
    for p in range(60):
        n = int(rng.integers(1, 14))
        human = rng.integers(1, 5, size=n).astype(float)  # many human ties
        metric = rng.integers(0, 4, size=n).astype(float) if p % 2 else rng.normal(size=n)
        for i in range(n):
            ranks.append(RankRow(f"p{p}", f"p{p}i{i}", float(human[i])))
            if rng.random() > 0.15:  # some items failed
                scores[f"p{p}i{i}"] = float(metric[i])
    data = build_eval_data([], ranks)
    srcc, krcc = prompt_correlations(data.score_vector(scores), data)
    checked = 0
    for group in data.rank_groups:
        ids = [data.item_ids[i] for i in group.items]
        x = np.array([scores.get(i, np.nan) for i in ids])
        keep = np.isfinite(x)
        x, y = x[keep], -group.ranks[keep]
        if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
            assert math.isnan(srcc.values[group.prompt])
            continue
        checked += 1
        assert srcc.values[group.prompt] == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
        assert krcc.values[group.prompt] == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    assert checked > 20
