"""An API key in the environment appears nowhere in the run dir, the cache or the logs."""

import json
import logging

import pytest
from doubles.server import FakeOpenAIServer, build_responder
from fault_helpers import config, descriptions
from run_dirs import latest_run

from titjudge.cli import main

SECRET = "sk-titjudge-SECRET-5f1e2d3c4b"


@pytest.mark.slow
def test_key_never_leaks(fault_data, tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv("TITJUDGE_TEST_KEY", SECRET)
    responder = build_responder("auto", descriptions=descriptions(fault_data))
    with FakeOpenAIServer(responder=responder, api_key=SECRET) as server:
        cfg = config(fault_data, server.url, tmp_path)
        cfg["describer"]["api_key_env"] = "TITJUDGE_TEST_KEY"
        cfg["judges"][0]["api_key_env"] = "TITJUDGE_TEST_KEY"
        # no timeouts here: under a loaded machine the fault tests' 1 s could fail a call
        # before it is sent (litellm's first call also loads it), and this test needs every
        # call to reach the server with the key
        cfg["describer"]["timeout"] = cfg["judges"][0]["timeout"] = 60.0
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps(cfg))
        with caplog.at_level(logging.DEBUG):
            code = main(["-vv", "run", str(path), "--limit", "6"])
        # the key really was used (>=: under load a 1 s client timeout retries a call whose
        # first request the server still answered)
        assert server.stats.by_status.get(200, 0) >= 12
    assert code == 0
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err + caplog.text
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file
    assert (
        "TITJUDGE_TEST_KEY"
        in (latest_run(tmp_path / "runs" / "faults") / "config.yaml").read_text()
    )
