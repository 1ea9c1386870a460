"""`titjudge estimate`: the calls a run would send now, counted without sending anything, and
their dollars; checked against what `titjudge run` then sends to a loopback server and spends."""

import json

import pytest
from builders import run_config, write_config
from doubles.server import FakeOpenAIServer, build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main

DEAD = "http://127.0.0.1:9/v1"  # nothing listens: an estimate that sent a request would fail


def _config(data, url, tmp_path) -> dict:
    config = run_config(data, tmp_path, url=url)
    config["describer"]["price"] = {"input": 2.0, "output": 8.0}  # litellm does not price it
    config["judges"][0]["model"] = "litellm:openai/gpt-4o-mini"  # litellm prices this one
    return config


def _write(config: dict, tmp_path) -> str:
    return str(write_config(config, tmp_path))


def _estimate(path: str, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert main(["estimate", path, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _lines(found: dict) -> dict[str, dict]:
    return {line["role"]: line for line in found["lines"]}


def _run(config: dict, tmp_path, capsys, *extra: str) -> tuple[dict, dict[str, int]]:
    """Run against a fresh loopback server: the summary and the requests per role it got."""
    auto = build_responder("auto", descriptions=stored_descriptions_of(config))
    with FakeOpenAIServer(responder=auto) as server:
        for section in (config["describer"], config["judges"][0]):
            section["api_base"] = server.url
        assert main(["run", _write(config, tmp_path), *extra]) == 0
        records = list(server.stats.records)
    capsys.readouterr()
    summary = json.loads((latest_run(tmp_path / "runs" / "e2e") / "summary.json").read_text())
    sent = {
        "describer": sum(1 for r in records if r.prompt is None),
        "judge": sum(1 for r in records if r.prompt is not None),
    }
    return summary, sent


def stored_descriptions_of(config: dict) -> dict[str, str]:
    from pathlib import Path

    return stored_descriptions(Path(config["data"]["manifest"]).parent)


def _spent(summary: dict) -> float:
    return sum(u["cost"] for u in summary["usage"].values())


@pytest.mark.slow
def test_estimate_counts_every_miss_and_never_sends(synth_data, tmp_path, capsys):
    path = _write(_config(synth_data, DEAD, tmp_path), tmp_path)
    found = _estimate(path, capsys)
    lines = _lines(found)
    assert found["calls"] == 32 and found["items"] == 16
    assert lines["describer"]["calls"] == lines["judge"]["calls"] == 16
    # the judge's calls are counted although no description exists yet
    assert lines["describer"]["basis"] == lines["judge"]["basis"] == "caps"
    assert lines["describer"]["price"] == "price option"
    assert lines["judge"]["price"].startswith("litellm:")
    assert 0 < found["usd"] <= found["usd_max"]
    # the table says the same
    assert main(["estimate", path]) == 0
    table = capsys.readouterr().out
    assert "32 calls to send" in table and f"${found['usd_max']:.4f}" in table

    # the run then sends exactly those calls, and spends no more than the worst case
    summary, sent = _run(_config(synth_data, DEAD, tmp_path), tmp_path, capsys)
    assert sent == {"describer": 16, "judge": 16}
    assert 0 < _spent(summary) <= found["usd_max"]
    # after the run, nothing is left to send
    again = _estimate(path, capsys)
    assert again["calls"] == 0 and again["usd"] == 0.0
    assert again["cached"] == 32 and found["cached"] == 0
    # and the table says so in one line, not with a table of zeros
    assert main(["estimate", path]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert said == "estimate: e2e (16 items): nothing to send, $0; 32 calls answered from the cache"


@pytest.mark.slow
def test_after_a_pilot_the_estimate_uses_the_cached_answers_usage(synth_data, tmp_path, capsys):
    config = _config(synth_data, DEAD, tmp_path)
    _run(config, tmp_path, capsys, "--limit", "4")
    path = _write(_config(synth_data, DEAD, tmp_path), tmp_path)
    found = _estimate(path, capsys)
    lines = _lines(found)
    assert lines["describer"]["calls"] == lines["judge"]["calls"] == 12
    assert lines["describer"]["cached"] == lines["judge"]["cached"] == 4
    assert lines["describer"]["basis"] == "cache: mean of 4 answers"
    assert found["usd"] < found["usd_max"]

    summary, sent = _run(_config(synth_data, DEAD, tmp_path), tmp_path, capsys)
    assert sent == {"describer": 12, "judge": 12}
    spent = _spent(summary)
    assert spent <= found["usd_max"]
    assert 0.5 * spent <= found["usd"] <= 2.0 * spent  # the pilot's usage predicts the rest


def test_an_unpriced_model_leaves_the_dollars_unknown_and_is_named(synth_data, tmp_path, capsys):
    config = _config(synth_data, DEAD, tmp_path)
    del config["describer"]["price"]
    path = _write(config, tmp_path)
    found = _estimate(path, capsys, "--limit", "2")
    assert found["calls"] == 4 and found["usd"] is None and found["usd_max"] is None
    assert found["unpriced"] == ["litellm:openai/vlm"]
    assert _lines(found)["judge"]["usd"] > 0  # the priced model's line is still known
    assert main(["estimate", path, "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "litellm:openai/vlm: no price" in out and "unknown" in out


def test_a_reasoning_judge_is_estimated_with_the_thinking_room_it_is_sent(
    synth_data, tmp_path, capsys
):
    """gpt-5 with no thinking budget is sent max_completion_tokens = answer + OpenAI's
    documented 25,000 reasoning reserve (`models.litellm.thinking`): the worst case counts that
    room as output (it was 0, so `usd_max` could fall below what the run pays)."""
    config = _config(synth_data, DEAD, tmp_path)
    config["judges"][0]["model"] = "litellm:openai/gpt-5"
    config["judges"][0].pop("temperature", None)
    found = _estimate(_write(config, tmp_path), capsys)
    judge = _lines(found)["judge"]
    answer_cap = 1024  # the llm judge's max_tokens
    assert judge["tokens_out_max"] >= judge["calls"] * (answer_cap + 25_000)
    assert judge["thinking_tokens"] == judge["calls"] * 25_000


@pytest.mark.slow
def test_under_require_model_exact_another_models_answers_are_misses(synth_data, tmp_path, capsys):
    """A run under `run.require_model: exact` asks again what another model answered; the
    estimate counts those calls as the run would (it used to count them as cache hits)."""
    import dataclasses

    config = _config(synth_data, DEAD, tmp_path)
    auto = build_responder("auto", descriptions=stored_descriptions_of(config))

    def renamed(request):  # the describer's replies say another model answered
        reply = auto(request)
        return dataclasses.replace(reply, model="vlm-snapshot") if request.image_sha256 else reply

    with FakeOpenAIServer(responder=renamed) as server:
        for section in (config["describer"], config["judges"][0]):
            section["api_base"] = server.url
        path = _write(config, tmp_path)
        assert main(["run", path]) == 0
    for section in (config["describer"], config["judges"][0]):
        section["api_base"] = DEAD
    path = _write(config, tmp_path)
    assert "describer" not in _lines(_estimate(path, capsys))  # all cached
    exact = _lines(_estimate(path, capsys, "--set", "run.require_model=exact"))
    assert exact["describer"]["calls"] == 16


def test_under_a_budget_the_estimate_says_where_it_stands(synth_data, tmp_path, capsys):
    """The estimate is where a researcher sets a budget: it compares its numbers with the
    config's `run.budget_usd`, and still lists an unpriced model (which `run` would refuse
    at load) as unknown instead of refusing."""
    config = _config(synth_data, DEAD, tmp_path)
    config["run"]["budget_usd"] = 1000
    path = _write(config, tmp_path)
    found = _estimate(path, capsys, "--limit", "2")
    assert found["budget_usd"] == 1000 and found["budget"] == "within it, even at worst"
    tight = _estimate(path, capsys, "--limit", "2", "--set", f"run.budget_usd={found['usd']}")
    assert tight["budget"].startswith("the expected spend is within it; at worst")
    low = _estimate(path, capsys, "--limit", "2", "--set", "run.budget_usd=0.000001")
    assert low["budget"].startswith("the expected spend is over it")

    del config["describer"]["price"]
    path = _write(config, tmp_path)
    assert main(["run", path]) == 2  # refused at load, nothing sent
    unpriced = _estimate(path, capsys, "--limit", "2")
    assert unpriced["usd"] is None and unpriced["unpriced"] == ["litellm:openai/vlm"]
    assert "refuses unpriced models" in unpriced["budget"]
    assert main(["estimate", path, "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "budget: $1000 (run.budget_usd): unknown" in out


@pytest.mark.slow
def test_a_replay_describers_estimate_keys_the_judge_calls_exactly(synth_data, tmp_path, capsys):
    """A `replay:` describer's stored descriptions are read, not stood in for: before a run
    the judge's calls are estimated on the real descriptions, and after it nothing is left to
    send (the replays cost nothing, send nothing and are not counted as calls)."""
    config = run_config(synth_data, tmp_path, url=DEAD)
    config["describer"] = {"model": f"replay:{synth_data / 'descriptions.jsonl'}"}
    config["judges"][0]["model"] = "litellm:openai/gpt-4o-mini"
    path = _write(config, tmp_path)
    before = _estimate(path, capsys)
    assert set(_lines(before)) == {"judge"} and _lines(before)["judge"]["calls"] == 16
    auto = build_responder("auto", descriptions=stored_descriptions_of(config))
    with FakeOpenAIServer(responder=auto) as server:
        config["judges"][0]["api_base"] = server.url
        assert main(["run", _write(config, tmp_path)]) == 0
        sent = server.stats.total
    assert sent == 16  # the judge's calls; the replay sent nothing
    config["judges"][0]["api_base"] = DEAD
    after = _estimate(_write(config, tmp_path), capsys)
    assert after["calls"] == 0 and after["cached"] == 16
