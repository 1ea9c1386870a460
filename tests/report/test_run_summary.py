"""summary.json read and written through one typed `RunSummary`: a file round-trips key for
key (the keys that apply only sometimes stay absent when they do not), a file written before
the type existed loads, and one that does not fit is refused with one line naming the file.
The run's exit code is read from it: a stopped model or a variant scored mostly by its
fallback is never 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from titjudge.errors import DataError
from titjudge.records.origins import StatusCounts, VariantOrigin
from titjudge.records.summary import (
    EXIT_BUDGET,
    EXIT_DEGRADED,
    EXIT_FAILED_ITEMS,
    EXIT_OK,
    BudgetSummary,
    Failures,
    RunSummary,
    StoppedModel,
)
from titjudge.report.run_summary import load_summary, parse_summary, write_summary

#: a demo run's summary.json as titjudge wrote it before `RunSummary` (paths shortened, a
#: failure group and a stopped model added in the shape `report.failures` wrote them)
OLD_SUMMARY = """{
  "name": "demo", "items": 18, "failed_items": 1, "image_errors": 0, "describer_failures": 1,
  "variants": {"tit_minilm": {"ok": 17, "fallback": 0, "failed": 1},
               "lexical": {"ok": 17, "fallback": 0, "failed": 1}},
  "usage": {
    "describer": {"calls": 18, "cache_hits": 0, "failures": 1, "truncated": 0, "blocked": 0,
                  "tokens_in": 0, "tokens_out": 0, "thinking_tokens": 0, "cached_tokens_in": 0,
                  "priced_cost": 0.0, "unpriced_calls": 0, "latency": 0.5341573129985591,
                  "unrecorded_model": 0, "answered_by": {"data/descriptions.jsonl": 17},
                  "cost": 0.0},
    "judge": {"calls": 36, "cache_hits": 12, "failures": 0, "truncated": 0, "blocked": 0,
              "tokens_in": 0, "tokens_out": 0, "thinking_tokens": 0, "cached_tokens_in": 0,
              "priced_cost": 0.0, "unpriced_calls": 2, "latency": 184.85898196000016,
              "unrecorded_model": 0, "answered_by": {"minilm": 36}, "cost": null}
  },
  "cache": {"calls": 54, "hits": 12, "misses": 42, "writes": 24,
            "by_model": {"embed:minilm": {"calls": 36, "hits": 12, "misses": 24, "writes": 24},
                         "replay:data/descriptions.jsonl":
                           {"calls": 18, "hits": 0, "misses": 18, "writes": 0}}},
  "answered_by": {
    "embed:minilm": {"answered_by": {"minilm": 36}, "unrecorded": 0, "other_models": [],
                     "mixed": false},
    "replay:data/descriptions.jsonl": {"answered_by": {"data/descriptions.jsonl": 17},
                                       "unrecorded": 0, "other_models": [], "mixed": false}
  },
  "wall_seconds": 23.573,
  "human_pairs": 18,
  "failures": {
    "groups": [{"role": "describer", "model": "replay:data/descriptions.jsonl",
                "kind": "connection refused", "count": 1, "not_sent": 0,
                "example": "connection refused (http://127.0.0.1:9/v1)"}],
    "stopped": [{"model": "replay:data/descriptions.jsonl", "reason": "connection refused",
                 "requests": 5}]
  }
}"""

#: the keys a run writes only when they apply: a budget, batch models, no human pairs, a
#: pairwise judge (shapes as `Budget.to_json`, `ModelStats.to_json`, `model_means` and
#: `pairwise_stats.run_summary` give them)
SOMETIMES = {
    "origins": {
        "tit_llm": {
            "fallback": "lexical",
            "model": "litellm:openai/judge",
            "n_scored": 17,
            "n_fallback": 17,
            "fallback_share": 1.0,
            "stopped": True,
        }
    },
    "budget": {
        "usd": 0.5,
        "spent_usd": 0.4999,
        "left_usd": 0.0001,
        "stopped": True,
        "calls_not_sent": 7,
        "item_calls_not_sent": 5,
        "pair_calls_not_sent": 2,
        "run_spent_usd": 0.25,
        "run_calls_not_sent": 7,
        "run_item_calls_not_sent": 5,
        "run_pair_calls_not_sent": 2,
        "items_undone": 4,
        "pairs_undone": 1,
    },
    "batch": {
        "litellm:openai/vlm": {
            "jobs": 1,
            "resumed": 0,
            "requests": 16,
            "answered": 15,
            "failed": 1,
            "price": "batch (the provider's batch rates; litellm's, else half the list price)",
            "sent_online": 2,
        },
        "litellm:openai/judge": {"sent_online": 16},
    },
    "model_means": {
        "lexical": {
            "ranking": [
                {"model": "m1", "mean": 0.5, "n": 3, "rank": 1},
                {"model": "m2", "mean": 0.5, "n": 3, "rank": 1},
                {"model": "m0", "mean": 0.25, "n": 2, "rank": 3},
            ],
            "n_failed_left_out": 1,
            "n_fallback_left_out": 0,
        }
    },
    "pairwise": {
        "pair": {
            "n_pairs": 24,
            "n_failed": 0,
            "repeats": 1,
            "n_order_verdicts": 48,
            "n_decisive": 40,
            "n_first_wins": 22,
            "n_second_wins": 18,
            "first_position_win_share": 0.55,
            "position_bias_rate": 0.1,
            "position_bias_p_value": 0.6358,
            "n_pairs_both_orders": 24,
            "order_agreement_rate": None,
            "n_order_disagreements": 3,
        }
    },
}


def test_a_summary_written_before_the_type_loads_and_round_trips_key_for_key(tmp_path: Path):
    doc = json.loads(OLD_SUMMARY)
    summary = parse_summary(doc, "summary.json")
    assert summary.items == 18 and summary.usage["judge"].cost is None
    assert summary.cache.by_model["embed:minilm"].misses == 24
    assert summary.answered_by["embed:minilm"].answered_by == {"minilm": 36}
    assert summary.failures is not None and summary.failures.stopped[0].requests == 5
    assert summary.budget is None and not summary.budget_spent
    written = summary.summary_json()
    assert written == doc and list(written) == list(doc)  # the same keys, in the same order
    assert not {"budget", "batch", "model_means", "pairwise"} & set(written)
    write_summary(tmp_path, summary)
    assert json.loads((tmp_path / "summary.json").read_text()) == doc
    assert load_summary(tmp_path) == summary


def test_the_keys_written_only_when_they_apply_round_trip(tmp_path: Path):
    doc = {**json.loads(OLD_SUMMARY), **SOMETIMES}
    summary = parse_summary(doc, "summary.json")
    assert summary.budget is not None and summary.budget_spent
    assert summary.batch is not None and summary.batch["litellm:openai/judge"].jobs is None
    assert summary.model_means is not None and summary.model_means["lexical"].ranking[2].rank == 3
    assert summary.pairwise is not None and summary.pairwise["pair"].order_agreement_rate is None
    assert summary.origins is not None and summary.origins["tit_llm"].fallback_only
    assert summary.summary_json() == doc  # a model sent online only: `sent_online` alone


def test_an_ablation_grids_budget_has_no_run_share():
    grid = {k: v for k, v in SOMETIMES["budget"].items() if not k.startswith("run_")}
    assert BudgetSummary.model_validate(grid).model_dump(mode="json") == grid


def test_a_summary_laid_out_by_hand_loads_with_what_it_says(tmp_path: Path):
    (tmp_path / "summary.json").write_text(json.dumps({"items": 8, "failed_items": 1}))
    summary = load_summary(tmp_path)
    assert summary is not None and (summary.items, summary.failed_items) == (8, 1)
    assert summary.model_fields_set == {"items", "failed_items"} and summary.failures is None
    assert load_summary(tmp_path / "none") is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            OLD_SUMMARY.replace('"items": 18', '"items": "many"'),
            "not a run summary: field 'items': ",
        ),
        (OLD_SUMMARY.replace('"hits": 12, "misses": 42', '"hits": [12]'), "field 'cache.hits': "),
        (OLD_SUMMARY.replace('"count": 1', '"count": null'), "field 'failures.groups.0.count': "),
        (OLD_SUMMARY[:200], "summary.json"),
        ("[1, 2]", "summary.json"),
    ],
)
def test_a_summary_that_does_not_fit_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, text: str, says: str
):
    path = tmp_path / "summary.json"
    path.write_text(text)
    with pytest.raises(DataError) as refused:
        load_summary(tmp_path)
    message = str(refused.value)
    assert str(path) in message and says in message and "\n" not in message


def test_a_fresh_summary_writes_none_of_the_keys_that_do_not_apply():
    written = RunSummary(name="x", wall_seconds=1.5).summary_json()
    assert written["wall_seconds"] == 1.5 and written["cache"]["by_model"] == {}
    assert not {"origins", "failures", "budget", "batch", "model_means", "pairwise"} & set(written)


def test_an_older_summary_has_no_origins_not_zero():
    summary = parse_summary(json.loads(OLD_SUMMARY), "summary.json")
    assert summary.origins is None  # not known: never a 0% share
    assert summary.stopped_models == ["replay:data/descriptions.jsonl"]
    assert parse_summary({"items": 8}, "summary.json").stopped_models is None


def _origin(n_fallback: int, stopped: bool = False) -> dict[str, VariantOrigin]:
    counts = StatusCounts(ok=10 - n_fallback, fallback=n_fallback)
    return {"tit_llm": VariantOrigin.of(counts, fallback="lexical", stopped=stopped)}


STOPPED = Failures(stopped=[StoppedModel(model="litellm:openai/vlm", reason="401", requests=5)])
SPENT = BudgetSummary(
    usd=1, spent_usd=1, left_usd=0, stopped=True, calls_not_sent=3, run_calls_not_sent=3
)


@pytest.mark.parametrize(
    ("summary", "code"),
    [
        (RunSummary(origins=_origin(0)), EXIT_OK),
        (RunSummary(origins=_origin(5)), EXIT_OK),  # half: not "mostly"
        (RunSummary(origins=_origin(6)), EXIT_DEGRADED),
        (RunSummary(origins=_origin(10)), EXIT_DEGRADED),
        (RunSummary(origins=_origin(0, stopped=True)), EXIT_DEGRADED),
        (RunSummary(origins=_origin(0), failures=STOPPED), EXIT_DEGRADED),  # the describer's
        (RunSummary(failed_items=3, origins=_origin(1)), EXIT_FAILED_ITEMS),
        (RunSummary(failed_items=3, origins=_origin(6)), EXIT_DEGRADED),
        (RunSummary(failed_items=3, origins=_origin(6), budget=SPENT), EXIT_BUDGET),
        # an older summary without origins: its status counts decide
        (RunSummary(variants={"v": {"ok": 2, "fallback": 6, "failed": 0}}), EXIT_DEGRADED),
    ],
)
def test_the_exit_code_says_what_happened(summary: RunSummary, code: int):
    assert summary.exit_code == code
