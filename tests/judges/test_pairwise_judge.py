"""The pairwise judge end to end on the synthetic benchmark through the loopback server."""

import csv
import json

import pytest
from doubles.server import FakeOpenAIServer
from judge_helpers import (
    ModesResponder,
    description_by_item,
    manifest,
    pair_choice,
    read_lines,
    run_config,
)

import titjudge
from titjudge.metrics.pairwise import summarise_outcomes
from titjudge.metrics.pairwise_stats import position_bias, verdict_outcomes, win_rates
from titjudge.metrics.tables import build_eval_data
from titjudge.records.items import HumanPair
from titjudge.records.pairs import OrderVerdict, PairVerdict

JUDGES = [
    {"name": "pair", "kind": "pairwise", "model": "litellm:openai/judge"},
    {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge"},
]


def human_pairs(data):
    with (data / "pairs.csv").open() as handle:
        return list(csv.DictReader(handle))


def expected_verdicts(data):
    """pair (a, b) -> 'a' | 'b' | 'tie' from the fair responder's rule, both orders."""
    prompts = {row["item_id"]: row["prompt"] for row in manifest(data)}
    texts = description_by_item(data)
    found = {}
    for row in human_pairs(data):
        a, b = row["item_a"], row["item_b"]
        forward = pair_choice(prompts[a], texts[a], texts[b])
        backward = pair_choice(prompts[a], texts[b], texts[a])
        one = {"first": a, "second": b, "tie": "tie"}[forward]
        two = {"first": b, "second": a, "tie": "tie"}[backward]
        found[(a, b)] = ("a" if one == a else "b") if one == two and one != "tie" else "tie"
    return found


@pytest.mark.slow
def test_pairwise_run_verdicts_accuracy_and_win_rates(synth_data, tmp_path):
    responder = ModesResponder(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        outcome = titjudge.evaluate(run_config(synth_data, server.url, tmp_path, JUDGES))
    pairs = human_pairs(synth_data)
    assert outcome.summary.exit_code == 0 and len(pairs) == 24
    # both orders of every human pair, once each; each description shown first exactly once per pair
    assert responder.count("pair") == 2 * len(pairs)
    texts = description_by_item(synth_data)
    shown = {detail for kind, detail in responder.log if kind == "pair"}
    for row in pairs:
        a, b = texts[row["item_a"]], texts[row["item_b"]]
        assert (a, b) in shown and (b, a) in shown

    run_dir = outcome.run_dir
    lines = read_lines(run_dir / "pairs_pair.jsonl")
    assert len(lines) == 24 and all(line["status"] == "ok" for line in lines)
    expected = expected_verdicts(synth_data)
    for line in lines:
        assert line["verdict"] == expected[(line["item_a"], line["item_b"])]
        forward, backward = line["orders"]
        assert (forward["first"], backward["first"]) == (line["item_a"], line["item_b"])
        assert forward["rationale"].endswith("covers more of the prompt")
    decided = [r for r in pairs if r["winner"] != "tie"]
    n_correct = sum(expected[(r["item_a"], r["item_b"])] == r["winner"] for r in decided)
    n_ties = sum(expected[(r["item_a"], r["item_b"])] == "tie" for r in decided)

    metrics = json.loads((run_dir / "metrics.json").read_text())
    entry = metrics["variants"]["pair"]
    assert entry["n_pairs"] == len(decided) == 23 and entry["n_human_ties"] == 1
    assert entry["n_correct"] == n_correct and entry["n_metric_ties"] == n_ties
    assert entry["pairwise_accuracy"] == n_correct / 23
    assert (
        entry["pairwise"]["position_bias_rate"] == 0.0
        and entry["pairwise"]["order_agreement_rate"] == 1.0
    )
    assert entry["accuracy_source"] == "verdicts" and entry["srcc"] is not None
    assert "pair" in metrics["leaderboard"]["variants"]

    # win rates: (wins + ties/2) / pairs, written as the variant's scores
    tally = {}
    for (a, b), verdict in expected.items():
        for item, points in (
            (a, {"a": 1, "b": 0, "tie": 0.5}[verdict]),
            (b, {"a": 0, "b": 1, "tie": 0.5}[verdict]),
        ):
            won, n = tally.get(item, (0.0, 0))
            tally[item] = (won + points, n + 1)
    with (run_dir / "scores.csv").open() as handle:
        scores = {
            r["item_id"]: float(r["score"])
            for r in csv.DictReader(handle)
            if r["variant"] == "pair"
        }
    assert scores == {item: round(won / n, 6) for item, (won, n) in tally.items()}
    items = {
        (line["item_id"], line["variant"]): line for line in read_lines(run_dir / "items.jsonl")
    }
    assert [v for (i, v) in items if i == pairs[0]["item_a"]] == ["pair", "tit_llm"]  # config order
    assert items[(pairs[0]["item_a"], "pair")]["details"]["pairs"] == 3
    assert outcome.summary.pairwise is not None
    assert outcome.summary.pairwise["pair"].n_pairs == 24


@pytest.mark.slow
def test_position_bias_on_a_server_that_favours_position_one(synth_data, tmp_path):
    responder = ModesResponder(synth_data, favour_first=True)
    with FakeOpenAIServer(responder=responder) as server:
        outcome = titjudge.evaluate(run_config(synth_data, server.url, tmp_path, JUDGES[:1]))
    entry = outcome.metrics_json()["variants"]["pair"]
    bias = entry["pairwise"]
    assert (bias["n_first_wins"], bias["n_second_wins"], bias["n_decisive"]) == (48, 0, 48)
    assert bias["position_bias_rate"] == 1.0 and bias["first_position_win_share"] == 1.0
    assert bias["position_bias_p_value"] == 2 * 0.5**48
    assert bias["order_agreement_rate"] == 0.0 and bias["n_order_disagreements"] == 24
    # every pair's orders disagree: all ties, none correct; every image wins half
    assert entry["pairwise_accuracy"] == 0.0 and entry["metric_tie_rate"] == 1.0
    assert {line.score for line in outcome.item_lines} == {0.5}


def _pair(forward, backward, human="a", samples=None, ids=("x", "y")):
    x, y = ids
    return PairVerdict(
        prompt_id="p",
        item_a=x,
        item_b=y,
        human=human,
        forward=OrderVerdict(
            first=x, second=y, choice=forward, samples=samples[0] if samples else [forward]
        ),
        backward=OrderVerdict(
            first=y, second=x, choice=backward, samples=samples[1] if samples else [backward]
        ),
    )


def test_verdict_rules_and_statistics_by_hand():
    agree = _pair("first", "second")  # both orders pick x
    flip = _pair("first", "first")  # position wins both times -> tie
    half = _pair("tie", "second")  # one tie, one choice -> tie
    failed = _pair(None, "second")
    assert [p.verdict for p in (agree, flip, half, failed)] == ["a", "tie", "tie", None]
    # the same verdicts on four distinct human pairs (item_a preferred), as the metrics count them
    judged = [
        _pair(*orders, ids=(f"a{n}", f"b{n}"))
        for n, orders in enumerate(
            [("first", "second"), ("first", "first"), ("tie", "second"), (None, "second")]
        )
    ]
    data = build_eval_data([HumanPair("p", j.item_a, j.item_b, "a") for j in judged], [])
    found = summarise_outcomes(verdict_outcomes(judged, data), data.n_human_ties)
    assert (found.n_pairs, found.n_correct, found.n_metric_ties, found.n_pairs_skipped) == (
        3,
        1,
        2,
        1,
    )
    bias = position_bias([agree, flip, half, failed])
    # decisive verdicts: agree (first, second), flip (first, first), half (second), failed (second)
    assert (bias.n_first_wins, bias.n_second_wins, bias.position_bias_rate) == (3, 3, 0.0)
    assert win_rates([agree, flip, half]) == {"x": (1 + 0.5 + 0.5) / 3, "y": (0 + 0.5 + 0.5) / 3}
    # per-repeat verdicts read sample k of each order
    sampled = _pair("first", "second", samples=(["first", "second"], ["second", "first"]))
    assert [sampled.verdict_of(0), sampled.verdict_of(1)] == ["a", "b"]
