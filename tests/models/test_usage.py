"""Usage: one definition of what calls took, and of how its cost reads when a price is unknown."""

import pytest

from titjudge.models.hub import usage_since
from titjudge.records import Progress
from titjudge.records.calls import CallResult, Usage, total_cost
from titjudge.report.progress import progress_line, stats_text


def call(cost: float | None, *, cached: bool = False, ok: bool = True, **kw) -> CallResult[str]:
    return CallResult(ok=ok, value="x", cached=cached, cost=cost, tokens_in=10, tokens_out=4, **kw)


def ledger(*calls: CallResult[str]) -> Usage:
    usage = Usage()
    for result in calls:
        usage.add(result)
    return usage


def test_priced_calls_sum_and_cached_calls_cost_nothing():
    usage = ledger(call(0.001), call(0.0025), call(0.5, cached=True))
    assert usage.calls == 3 and usage.cache_hits == 1
    assert usage.cost == pytest.approx(0.0035) and usage.unpriced_calls == 0
    assert (usage.tokens_in, usage.tokens_out) == (20, 8)  # the hit's tokens were paid before
    assert usage.cost_text() == "$0.0035"


def test_an_unpriced_model_reads_cost_unknown_never_zero():
    usage = ledger(call(None), call(None), call(None, cached=True))
    assert usage.cost is None and usage.unpriced_calls == 2
    assert usage.cost_text() == "cost unknown (2 unpriced calls)"
    assert "$0.0000" not in usage.text()
    assert usage.to_json()["cost"] is None


def test_a_mix_keeps_the_known_part_and_says_what_is_missing():
    usage = ledger(call(0.01), call(None))
    assert usage.cost is None and usage.priced_cost == pytest.approx(0.01)
    assert usage.cost_text() == "$0.0100 + 1 unpriced call"


def test_a_free_reply_is_priced_at_zero():
    """A replay (or anything that reports 0.0) is known to be free, unlike an unknown price."""
    assert ledger(call(0.0)).cost_text() == "$0.0000"


def test_failures_cuts_and_blocks_are_counted():
    usage = ledger(
        call(0.001, ok=False, finish_reason="length"),
        call(0.001, ok=False, finish_reason="content_filter"),
        call(0.001, thinking_tokens=3),
    )
    assert (usage.failures, usage.truncated, usage.blocked, usage.thinking_tokens) == (2, 1, 1, 3)
    assert usage.text() == (
        "3 calls, 0 cache hits, 2 failures (1 truncated, 1 blocked), 30+12 tokens, $0.0030"
    )


def test_sum_difference_and_json_round_trip():
    a, b = ledger(call(0.002), call(None)), ledger(call(0.003, cached=True), call(0.004))
    total = sum([a, b], Usage())
    assert total.calls == 4 and total.priced_cost == pytest.approx(0.006)
    assert total.unpriced_calls == 1 and total.cost is None
    assert total - a == b
    assert a == ledger(call(0.002), call(None))  # `+` made a new value, the parts are unchanged
    assert Usage.from_json(total.to_json()) == total
    assert usage_since({"judge": a}, {"judge": total, "describer": b}) == {
        "judge": b,
        "describer": b,
    }


def test_total_cost_is_none_when_any_part_is_unknown():
    assert total_cost([0.25, 0.5]) == pytest.approx(0.75)
    assert total_cost([0.25, None]) is None
    assert total_cost([]) is None


def test_progress_text_shows_cost_unknown_for_an_unpriced_run():
    spent = ledger(call(None), call(None, cached=True))
    progress = Progress(total=4, done=1, spent=lambda: spent)
    assert stats_text(progress) == (
        "failed 0 · cache hits 1/2 · spend cost unknown (1 unpriced call) · ETA --"
    )
    priced = Progress(total=4, pairs_total=6, pairs_done=2, spent=lambda: ledger(call(0.012)))
    assert progress_line(priced) == (
        "described 0/4 · judged 0/4 · pairs 2/6 · failed 0 · cache hits 0/1 · spend $0.0120 · "
        "ETA --"
    )
    assert stats_text(Progress()) == "failed 0 · cache hits 0/0 · spend $0.0000 · ETA 0:00:00"


def test_per_item_costs_stay_unknown_when_any_call_is_unpriced():
    """An item's cost over several calls (two calls, a re-ask, repeats, a pairwise item's
    share) is unknown when one price is; a partial sum would read as the whole."""
    from titjudge.records.calls import sum_costs
    from titjudge.records.outcomes import JudgeOutcome

    assert sum_costs([0.001, 0.002]) == pytest.approx(0.003)
    assert sum_costs([0.001, None]) is None and sum_costs([None, 0.001]) is None
    assert sum_costs([]) is None and sum_costs([0.0]) == 0.0
    priced = JudgeOutcome("v", "ok", score=1.0)
    priced.take_usage(call(0.001))
    priced.take_usage(call(0.002))
    assert priced.cost == pytest.approx(0.003) and priced.calls == 2
    mixed = JudgeOutcome("v", "ok", score=1.0)
    mixed.take_usage(call(0.001))
    mixed.take_usage(call(None))
    mixed.take_usage(call(0.004))
    assert mixed.cost is None  # was 0.005 before: the unpriced call vanished
    first_unpriced = JudgeOutcome("v", "ok", score=1.0)
    first_unpriced.take_usage(call(None))
    first_unpriced.take_usage(call(0.004))
    assert first_unpriced.cost is None  # was 0.004
