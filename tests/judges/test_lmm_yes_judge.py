"""lmm_yes: P(yes) / (P(yes) + P(no)) from the first answer token, through the loopback server."""

import math

import pytest
from doubles.server import FakeOpenAIServer
from judge_helpers import (
    ModesResponder,
    description_by_item,
    manifest,
    read_lines,
    run_config,
    yes_probabilities,
)

import titjudge
from titjudge.judges.lmm_yes import YesProbabilityError, answer_side, yes_probability
from titjudge.records.calls import TokenLogprobs


def test_answer_spellings():
    assert [answer_side(t) for t in ("Yes", " yes", "YES", "Yes.", "Y", "ye")] == ["yes"] * 6
    assert [answer_side(t) for t in ("No", " no", "N", "No,")] == ["no"] * 4
    assert [answer_side(t) for t in ("The", " ", "Nope", "yess", "", "You")] == [None] * 6


def test_yes_probability_reads_the_first_non_space_token_and_normalises():
    lp = math.log
    found = yes_probability(
        [
            TokenLogprobs(
                "\n", lp(0.9), {"\n": lp(0.9), "Yes": lp(0.05)}
            ),  # whitespace: not the answer
            TokenLogprobs(
                "Yes", lp(0.5), {"Yes": lp(0.5), " yes": lp(0.1), "No": lp(0.2), "The": lp(0.2)}
            ),
        ]
    )
    assert (
        found["position"] == 1
        and found["p_yes"] == pytest.approx(0.6)
        and found["p_no"] == pytest.approx(0.2)
    )
    assert found["score"] == pytest.approx(0.75)
    only_yes = yes_probability([TokenLogprobs("Yes", lp(0.7), {"Yes": lp(0.7), "Sure": lp(0.2)})])
    assert only_yes["score"] == 1.0  # No below the top-k counts as 0
    with pytest.raises(YesProbabilityError, match="neither Yes nor No"):
        yes_probability([TokenLogprobs("Sure", lp(0.7), {"Sure": lp(0.7), "Maybe": lp(0.2)})])


@pytest.mark.slow
def test_lmm_yes_run_through_the_loopback_server(synth_data, tmp_path):
    judges = [{"name": "yes", "kind": "lmm_yes"}]  # the describer's own VLM
    responder = ModesResponder(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        outcome = titjudge.evaluate(run_config(synth_data, server.url, tmp_path, judges))
    assert outcome.summary.exit_code == 0
    # one yes/no request per image, and no description: no judge reads one
    assert (responder.count("yes"), responder.count("describe")) == (16, 0)
    prompts = {row["item_id"]: row["prompt"] for row in manifest(synth_data)}
    texts = description_by_item(synth_data)
    for line in read_lines(outcome.run_dir / "items.jsonl"):
        p_yes, p_no = yes_probabilities(prompts[line["item_id"]], texts[line["item_id"]])
        assert line["score"] == pytest.approx(p_yes / (p_yes + p_no), abs=1e-6)
        assert line["details"]["p_yes"] == pytest.approx(p_yes, abs=1e-6)
        assert line["details"]["answer_token"] == ("Yes" if p_yes >= p_no else "No")
    metrics = outcome.metrics_json()["variants"]["yes"]
    assert metrics["n_pairs"] == 23 and metrics["pairwise_accuracy"] is not None
