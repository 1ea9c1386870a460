"""What a run spends, as `titjudge run` reports it: a model's own `price` option prices what
litellm does not, prompt tokens the provider served from its cache are recorded and priced at
the cached rate, and a model that runs in the process costs $0 of API spend."""

import dataclasses
import json

import pytest
import yaml
from builders import run_config
from doubles.server import FakeOpenAIServer, build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main

CACHED = 7


def _run(config: dict, tmp_path, capsys) -> tuple[dict, str]:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    run_dir = latest_run(tmp_path / "runs" / config["name"])
    return json.loads((run_dir / "summary.json").read_text()), out


@pytest.mark.slow
def test_price_option_prices_a_model_litellm_does_not(synth_data, tmp_path, capsys):
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with FakeOpenAIServer(responder=auto) as server:
        config = run_config(synth_data, tmp_path, url=server.url)
        config["describer"]["price"] = {"input": 2.0, "output": 8.0}
        config["judges"][0]["price"] = {"input": 0.0, "output": 0.0}  # self-hosted: free
        summary, out = _run(config, tmp_path, capsys)

    describer, judge = summary["usage"]["describer"], summary["usage"]["judge"]
    assert describer["unpriced_calls"] == 0 and judge["unpriced_calls"] == 0
    expected = (describer["tokens_in"] * 2.0 + describer["tokens_out"] * 8.0) / 1e6
    assert describer["cost"] == pytest.approx(expected) and expected > 0
    assert judge["cost"] == 0.0
    assert "unpriced" not in out and f"${expected:.4f}" in out


@pytest.mark.slow
def test_cached_prompt_tokens_are_recorded_and_priced_at_the_cached_rate(
    synth_data, tmp_path, capsys
):
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))

    def cached(request):  # the provider says CACHED of the prompt tokens came from its cache
        return dataclasses.replace(auto(request), cached_tokens=CACHED)

    with FakeOpenAIServer(responder=cached) as server:
        config = run_config(synth_data, tmp_path, url=server.url)
        config["describer"]["price"] = {"input": 2.0, "output": 8.0, "cached_input": 0.5}
        summary, _ = _run(config, tmp_path, capsys)

    describer = summary["usage"]["describer"]
    assert describer["cached_tokens_in"] == CACHED * describer["calls"] == CACHED * 16
    fresh = describer["tokens_in"] - describer["cached_tokens_in"]
    expected = (
        fresh * 2.0 + describer["cached_tokens_in"] * 0.5 + describer["tokens_out"] * 8
    ) / 1e6
    assert describer["cost"] == pytest.approx(expected)
    assert summary["usage"]["judge"]["cached_tokens_in"] == CACHED * 16


@pytest.mark.slow
def test_a_local_embedding_judge_costs_nothing(synth_data, tmp_path, capsys):
    # the demo's case: replayed descriptions and an in-process embedding model (MiniLM there)
    torch = pytest.importorskip("torch")
    from doubles.tiny_models import build_tiny_qwen3_embedding

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    config = {
        "name": "local",
        "data": {
            "manifest": str(synth_data / "manifest.jsonl"),
            "human_pairs": str(synth_data / "pairs.csv"),
        },
        "describer": {"model": f"replay:{synth_data / 'descriptions.jsonl'}"},
        "judges": [
            {
                "name": "tit_score",
                "kind": "embedding",
                "model": f"embed:{build_tiny_qwen3_embedding(tmp_path / 'embed')}",
                "device": "cpu",
            },
            {"name": "lexical", "kind": "lexical"},
        ],
        "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
    }
    try:
        summary, out = _run(config, tmp_path, capsys)
    finally:
        torch.set_num_threads(before)
    judge = summary["usage"]["judge"]
    assert judge["calls"] > 0 and judge["unpriced_calls"] == 0 and judge["cost"] == 0.0
    assert "unknown" not in out and "unpriced" not in out
