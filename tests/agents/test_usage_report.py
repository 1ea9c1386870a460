"""What a run reports it spent: an unpriced model's cost is unknown, a priced one's is the sum."""

import json

import pytest
import yaml
from builders import run_config
from doubles.server import FakeOpenAIServer, build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main


@pytest.mark.slow
def test_run_summary_says_cost_unknown_for_an_unpriced_model(synth_data, tmp_path, capsys):
    # litellm has no price for openai/vlm (the describer), it has one for gpt-4o-mini (the judge)
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with FakeOpenAIServer(responder=auto) as server:
        config = run_config(synth_data, tmp_path, url=server.url)
        config["judges"][0]["model"] = "litellm:openai/gpt-4o-mini"
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        assert main(["run", str(path)]) == 0
        first = capsys.readouterr().out
        run_dir = latest_run(tmp_path / "runs" / "e2e")
        summary = json.loads((run_dir / "summary.json").read_text())
        lines = [json.loads(x) for x in (run_dir / "items.jsonl").read_text().splitlines()]
        assert main(["run", str(path)]) == 0
        again = capsys.readouterr().out
        cached = json.loads((latest_run(tmp_path / "runs" / "e2e") / "summary.json").read_text())

    describer, judge = summary["usage"]["describer"], summary["usage"]["judge"]
    assert describer["cost"] is None and describer["unpriced_calls"] == 16
    assert "describer: 16 calls, 0 cache hits, 0 failures" in first
    assert "cost unknown (16 unpriced calls)" in first and "$0.0000" not in first
    judged = [line["cost"] for line in lines if line["variant"] == "tit_llm"]
    assert judge["unpriced_calls"] == 0 and judge["cost"] > 0
    assert judge["cost"] == pytest.approx(sum(judged))
    assert f"${judge['cost']:.4f}" in first
    # the re-run is served from the cache: nothing paid, so every cost is a known 0
    assert cached["usage"]["describer"]["cost"] == cached["usage"]["judge"]["cost"] == 0.0
    assert "describer: 16 calls, 16 cache hits, 0 failures, 0+0 tokens, $0.0000" in again
