"""What a pairwise run yields: per-image win rates, verdict accuracy, position bias.

- Win rate of an image: (wins + ties / 2) / pairs it was judged in, over pairs with a
  verdict (both orders parsed). A tie (including an order disagreement) is half a win
  for each side, so a judge that always ties gives every image 0.5. An image in no
  judged pair has no win rate: its outcome fails, it is never 0.5.
- Pairwise accuracy (from verdicts, never from the win rates): over human non-tie pairs
  whose verdict exists, the share where the verdict names the human winner; a verdict tie
  is wrong and is counted as a metric tie (`verdict_outcomes`, read by
  `metrics.summary.metrics_record` like any variant's pair outcomes).
- Position bias: every pair is shown both ways, so an order-blind judge's decisive
  single-order verdicts pick the first-shown image exactly half the time.
  `position_bias_rate` = (first wins - second wins) / decisive verdicts, in [-1, 1]: 0 is
  no bias, 1 means the first position always won, -1 the second. Its exact two-sided
  binomial p-value against 0.5 says whether the lean is beyond chance.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from titjudge.metrics.exact import binomtest_half
from titjudge.metrics.pairwise import PairOutcomes
from titjudge.metrics.tables import EvalData
from titjudge.records.calls import sum_costs
from titjudge.records.metric_values import PositionBias
from titjudge.records.outcomes import JudgeOutcome
from titjudge.records.pairs import PairVerdict, PairwiseRun
from titjudge.records.repeats import spread
from titjudge.records.summary import PairwiseSummary


def _tally(judgements: Sequence[PairVerdict], sample: int | None) -> dict[str, list[int]]:
    """item id -> [wins, losses, ties] over pairs with a verdict."""
    tally: dict[str, list[int]] = {}
    for judged in judgements:
        verdict = judged.verdict_of(sample)
        if verdict is None:
            continue
        a, b = (
            tally.setdefault(judged.item_a, [0, 0, 0]),
            tally.setdefault(judged.item_b, [0, 0, 0]),
        )
        if verdict == "tie":
            a[2] += 1
            b[2] += 1
        else:
            winner, loser = (a, b) if verdict == "a" else (b, a)
            winner[0] += 1
            loser[1] += 1
    return tally


def win_rates(judgements: Sequence[PairVerdict], sample: int | None = None) -> dict[str, float]:
    return {
        item: (w + t / 2) / (w + l_ + t) for item, (w, l_, t) in _tally(judgements, sample).items()
    }


def item_outcomes(run: PairwiseRun, item_ids: Sequence[str]) -> dict[str, JudgeOutcome]:
    """One outcome per item: its win rate (or why it has none), usage split over its pairs."""
    tally = _tally(run.judgements, None)
    by_sample = (
        [win_rates(run.judgements, k) for k in range(run.repeats)] if run.repeats > 1 else []
    )
    outcomes = {}
    for item_id in item_ids:
        if item_id in tally:
            w, l_, t = tally[item_id]
            n = w + l_ + t
            outcome = JudgeOutcome(
                variant=run.judge,
                status="ok",
                score=round((w + t / 2) / n, 6),
                rationale=f"won {w}, lost {l_}, tied {t} of {n} pairs judged in both orders "
                "(a tie, or the two orders disagreeing, counts half)",
                details={"wins": w, "losses": l_, "ties": t, "pairs": n},
            )
        else:
            outcome = JudgeOutcome.failed(
                run.judge, "no pair with this image got a verdict (see pairs file)"
            )
        if by_sample:
            scores = [rates.get(item_id) for rates in by_sample]
            outcome.details["repeats"] = {
                "n": run.repeats,
                "scores": scores,
                **spread([s for s in scores if s is not None]),
            }
        _add_usage(outcome, item_id, run.judgements)
        outcomes[item_id] = outcome
    return outcomes


def _add_usage(outcome: JudgeOutcome, item_id: str, judgements: Sequence[PairVerdict]) -> None:
    """Half of each pair's calls is charged to each of its two images (totals stay exact)."""
    cached, halves = True, []
    for judged in judgements:
        if item_id not in (judged.item_a, judged.item_b):
            continue
        first = item_id == judged.item_a
        for order in (judged.forward, judged.backward):
            outcome.tokens_in += (order.tokens_in + first) // 2
            outcome.tokens_out += (order.tokens_out + first) // 2
            halves.append(None if order.cost is None else order.cost / 2)
            for model in order.answered_by:
                outcome.note_model(model)
            outcome.latency += order.latency / 2
            cached = cached and order.cached
    outcome.cost = sum_costs(halves)
    outcome.cached = cached


def verdict_outcomes(
    judgements: Sequence[PairVerdict], data: EvalData, sample: int | None = None
) -> PairOutcomes:
    """Per non-tie human pair of `data`, what the verdicts say: evaluated (a verdict exists),
    correct (it names the human winner), metric tie (the verdict is a tie, or the two orders
    disagreed). The same arrays a score vector gives (`metrics.pairwise.pair_outcomes`), so
    accuracy, tie rate, p-value, bootstrap CI and McNemar all come from one place."""
    index = {
        (data.item_ids[int(w)], data.item_ids[int(lo)]): i
        for i, (w, lo) in enumerate(zip(data.pair_winner, data.pair_loser, strict=True))
    }
    size = data.pair_winner.size
    evaluated, correct, tie = (np.zeros(size, dtype=bool) for _ in range(3))
    for judged in judgements:
        if judged.human not in ("a", "b"):
            continue
        winner, loser = (
            (judged.item_a, judged.item_b)
            if judged.human == "a"
            else (judged.item_b, judged.item_a)
        )
        i = index.get((winner, loser))
        verdict = judged.verdict_of(sample)
        if i is None or verdict is None:
            continue
        evaluated[i] = True
        correct[i] = verdict == judged.human
        tie[i] = verdict == "tie"
    return PairOutcomes(evaluated, correct, tie)


def position_bias(judgements: Sequence[PairVerdict]) -> PositionBias:
    """How often the first-shown image wins a decisive single-order verdict, and order agreement."""
    first = second = tie = 0
    both = agree = 0
    for judged in judgements:
        for order in (judged.forward, judged.backward):
            first += order.choice == "first"
            second += order.choice == "second"
            tie += order.choice == "tie"
        one, two = judged.forward.winner(), judged.backward.winner()
        if one is not None and two is not None:
            both += 1
            agree += one == two
    decisive = first + second
    return PositionBias(
        n_order_verdicts=first + second + tie,
        n_decisive=decisive,
        n_first_wins=first,
        n_second_wins=second,
        first_position_win_share=first / decisive if decisive else None,
        position_bias_rate=(first - second) / decisive if decisive else None,
        position_bias_p_value=binomtest_half(first, decisive) if decisive else None,
        n_pairs_both_orders=both,
        order_agreement_rate=agree / both if both else None,
        n_order_disagreements=both - agree,
    )


def run_summary(run: PairwiseRun) -> PairwiseSummary:
    """Counts and position bias for summary.json (needs no human data)."""
    return PairwiseSummary(
        n_pairs=len(run.judgements),
        n_failed=sum(j.verdict is None for j in run.judgements),
        repeats=run.repeats,
        **dict(position_bias(run.judgements)),
    )
