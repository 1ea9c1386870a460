"""A `batch: true` judge behind a describer without `batch`: the first run describes online
during the batch phase and sends the judge's calls as batch lines in that same run, never
online; each description is paid and counted once."""

import json

import pytest
from batch_helpers import N_ITEMS, batch_env
from builders import run_config
from doubles.batch_server import BatchServer
from doubles.server import build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


@pytest.mark.slow
def test_a_batch_judge_behind_an_online_describer_is_batched_in_the_first_run(batch_data, tmp_path):
    responder = build_responder("auto", descriptions=stored_descriptions(batch_data))
    with BatchServer(responder=responder) as server:
        config = run_config(batch_data, tmp_path, url=server.url)
        config["judges"][0]["batch"] = True
        config["judges"][0]["batch_poll"] = 0.05
        path = tmp_path / "run.json"
        path.write_text(json.dumps(config))
        assert main(["run", str(path)]) == 0
        # the descriptions online, each once; every judge call a batch line
        assert server.stats.total == N_ITEMS
        assert server.batch_creates == 1 and server.lines_answered == N_ITEMS
    summary = json.loads((latest_run(tmp_path / "runs" / "e2e") / "summary.json").read_text())
    assert summary["failed_items"] == 0
    assert summary["batch"]["litellm:openai/judge"]["answered"] == N_ITEMS
    describer = summary["usage"]["describer"]
    assert (describer["calls"], describer["cache_hits"]) == (N_ITEMS, 0)
