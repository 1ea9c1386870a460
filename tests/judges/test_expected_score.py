"""score_mode expected: the arithmetic on known log-probabilities, and a run through the loopback server."""

import math

import pytest
from doubles.server import FakeOpenAIServer
from judge_helpers import ModesResponder, read_lines, run_config

import titjudge
from titjudge.cli import main
from titjudge.judges.expected import ExpectedScoreError, expected_score
from titjudge.records.calls import TokenLogprobs


def tokens(*pieces, at=None, top=None, logprob=None):
    """TokenLogprobs for `pieces`; the piece at index `at` gets `top` (probabilities) and `logprob`."""
    found = [TokenLogprobs(piece, math.log(0.9), {}) for piece in pieces]
    if at is not None:
        found[at] = TokenLogprobs(
            pieces[at], math.log(logprob), {t: math.log(p) for t, p in top.items()}
        )
    return found


OPENAI_STYLE = ('{"', "rationale", '":', ' "', "fits", '",', ' "', "score", '":', " ", "7", "}")


def test_single_token_score_is_the_probability_weighted_mean():
    top = {"7": 0.5, "8": 0.3, "6": 0.1, "seven": 0.05, "10": 0.05}
    found = expected_score(tokens(*OPENAI_STYLE, at=10, top=top, logprob=0.5), 7, 1, 9)
    # '10' is off the 1-9 scale and 'seven' is not digits: both dropped, the rest renormalised
    assert found.value == pytest.approx((7 * 0.5 + 8 * 0.3 + 6 * 0.1) / 0.9)
    assert found.candidates == pytest.approx(
        {6: 0.1, 7: 0.5, 8: 0.3}
    ) and found.mass == pytest.approx(0.9)
    assert (found.sampled, found.n_tokens) == (7, 1)


def test_leading_space_spellings_merge_and_a_missing_sampled_token_is_added():
    pieces = ('{"', "score", '":', " 7", "}")
    top = {" 9": 0.3, "9": 0.05, ":": 0.05, " 6": 0.2}  # the sampled ' 7' is not in its own top-k
    found = expected_score(tokens(*pieces, at=3, top=top, logprob=0.4), 7, 0, 100)
    assert found.candidates == pytest.approx({6: 0.2, 7: 0.4, 9: 0.35})
    assert found.value == pytest.approx((6 * 0.2 + 7 * 0.4 + 9 * 0.35) / 0.95)


def test_multi_token_number_uses_the_leading_token_with_the_sampled_tail():
    pieces = ('{"', "score", '":', " ", "8", "5", "}")  # Qwen writes digits one token each
    top = {"8": 0.45, "7": 0.3, "9": 0.1, "1": 0.1, "10": 0.05}
    found = expected_score(tokens(*pieces, at=4, top=top, logprob=0.45), 85, 0, 100)
    # candidates 85, 75, 95, 15; '10' would make the three-digit 105 and is dropped
    assert found.candidates == pytest.approx({85: 0.45, 75: 0.3, 95: 0.1, 15: 0.1})
    assert found.value == pytest.approx((85 * 0.45 + 75 * 0.3 + 95 * 0.1 + 15 * 0.1) / 0.95)
    assert found.n_tokens == 2


def test_unusable_replies_are_errors_not_numbers():
    with pytest.raises(ExpectedScoreError, match="equal to the verdict's 8"):
        expected_score(tokens(*OPENAI_STYLE), 8, 1, 9)
    with pytest.raises(ExpectedScoreError, match="not a non-negative integer"):
        expected_score(tokens('{"score": ', "7", ".", "5", "}"), 7.5, 0, 100)
    with pytest.raises(ExpectedScoreError, match=r"no candidate score token in \[1, 9\]"):
        expected_score(
            tokens(
                '{"', "score", '":', " ", "0", "}", at=4, top={"0": 0.6, "10": 0.2}, logprob=0.6
            ),
            0,
            1,
            9,
        )


def loopback_expected(n: int) -> float:
    """The fake server gives a number token n probability 1/3 and n+d (1/3) * 0.5**|d|; on the
    1-9 scale with 20 alternatives every value 1..9 is among them."""
    weights = {v: 0.5 ** abs(v - n) for v in range(1, 10)}
    return sum(v * w for v, w in weights.items()) / sum(weights.values())


@pytest.mark.slow
def test_expected_mode_through_the_loopback_server(small_data, tmp_path):
    """Checked item by item, so the 9 items of `small_data` are enough."""
    judges = [
        {
            "name": "expected",
            "kind": "llm",
            "model": "litellm:openai/judge",
            "score_mode": "expected",
        },
        {
            "name": "sampled",
            "kind": "llm",
            "model": "litellm:openai/judge",
            "prompt": "judge_expected",
        },
    ]
    responder = ModesResponder(small_data)
    with FakeOpenAIServer(responder=responder) as server:
        outcome = titjudge.evaluate(run_config(small_data, server.url, tmp_path, judges))
    assert outcome.summary.exit_code == 0
    lines = read_lines(outcome.run_dir / "items.jsonl")
    expected = {line["item_id"]: line for line in lines if line["variant"] == "expected"}
    sampled = {line["item_id"]: line for line in lines if line["variant"] == "sampled"}
    assert len(expected) == 9
    for item_id, line in expected.items():
        n = line["details"]["sampled_score"]
        # the 1-9 template, validated on its scale
        assert n == sampled[item_id]["score"] and 1 <= n <= 9
        assert line["score"] == pytest.approx(loopback_expected(n), abs=1e-6)
        assert line["details"]["candidates"].keys() == {str(v) for v in range(1, 10)}
    assert "top_logprobs: 20" in (outcome.run_dir / "config.yaml").read_text()


@pytest.mark.slow
def test_backends_without_logprobs_are_refused_at_config_time(synth_data, tmp_path, capsys):
    replay = f"replay:{synth_data / 'descriptions.jsonl'}"
    for judge in (
        {"name": "j", "kind": "llm", "model": replay, "score_mode": "expected"},
        {"name": "j", "kind": "lmm_yes", "model": replay},
    ):
        config = run_config(synth_data, "http://127.0.0.1:9/v1", tmp_path, [judge])
        config["describer"] = {"model": replay}
        path = tmp_path / "c.json"
        path.write_text(__import__("json").dumps(config))
        assert main(["run", str(path)]) == 2
        err = capsys.readouterr().err
        assert "judge 'j'" in err and "needs token log-probabilities" in err and "replay" in err
