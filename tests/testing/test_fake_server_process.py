"""The fake server as a separate process: launcher, command line, clean stop, crash."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

import pytest
from doubles.relies import installed
from doubles.server import main as server_main
from doubles.server import start_server_process, stop_server_process
from fake_server_support import JUDGE_MESSAGE, JUDGE_SCORE_0_100, failure, generate

from titjudge.models.core.base import TransientError

pytestmark = [pytest.mark.doubles, pytest.mark.slow]  # the fake server's own processes


def stats(url: str) -> dict[str, object]:
    with urllib.request.urlopen(
        url.removesuffix("/v1") + "/stats?records=0", timeout=5
    ) as response:
        return json.loads(response.read())


def test_launcher_prints_url_serves_titjudge_and_stops_cleanly() -> None:
    proc, url = start_server_process(["--port", "0", "--responder", "judge", "--latency", "0.05"])
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        data = json.loads(generate(url, JUDGE_MESSAGE).text)
        assert data["score"] == JUDGE_SCORE_0_100
        counters = stats(url)
        assert counters["total"] == 1 and counters["by_status"] == {"200": 1}
    finally:
        code = stop_server_process(proc)
    assert code == 0  # SIGTERM is a clean shutdown


def test_scripted_replies_and_faults_from_a_file(tmp_path: Path) -> None:
    script = tmp_path / "replies.jsonl"
    script.write_text(
        '{"content": "first"}\n{"fault": "429", "retry_after": 4}\n{"json": {"score": 9}}\n'
    )
    proc, url = start_server_process(["--responder", "scripted", "--script", str(script)])
    try:
        assert generate(url, "a").text == "first"
        error = failure(url, "b")
        assert isinstance(error, TransientError), f"{error!r} ({installed()})"
        assert (error.rate_limited, error.retry_after) == (True, 4.0), installed()
        assert generate(url, "c").text == '{"score": 9}'
        exhausted = failure(url, "d")
        assert isinstance(exhausted, TransientError) and not exhausted.rate_limited
        assert "scripted responder has no replies left (it had 3)" in str(exhausted)
    finally:
        stop_server_process(proc)


def test_killed_server_is_a_transient_failure() -> None:
    proc, url = start_server_process([])
    assert generate(url, "alive").text == "alive"
    proc.kill()
    proc.wait(10)
    stop_server_process(proc)
    error = failure(url, "anyone there?")
    assert isinstance(error, TransientError), f"{error!r} ({installed()})"  # like a reset
    assert not error.rate_limited and error.retry_after is None


def test_bad_command_line_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line's `main` in this process (what it prints and returns), then one
    process that exits with it: the launcher names the exit code."""
    missing = tmp_path / "nope.jsonl"
    assert server_main(["--descriptions", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert (
        err.strip()
        == f"error: {missing}: cannot read descriptions file (No such file or directory)"
    )
    assert server_main(["--faults", "429,teapot"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(RuntimeError, match="exited with code 2"):
        start_server_process(["--faults", "429,teapot"], stderr=subprocess.DEVNULL)
