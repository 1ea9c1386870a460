"""Kill a run mid-way (several times), run it again: nothing finished is paid for twice,
and the outputs match an uninterrupted run. The killed runs are processes of their own; the
resumed one, after they are gone, is the CLI's main here (nothing about it needs a process)."""

import json
import os
import signal
import time

import pytest
from builders import run_config
from cli_process import start_cli
from doubles.server import FakeOpenAIServer, build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

import titjudge
from titjudge.cli import main

CONCURRENCY = 4
#: describer and judge each have their own limiter, so up to this many calls are in flight
IN_FLIGHT = 2 * CONCURRENCY


def start_run(config_path, env):
    """`titjudge run` in a process of its own that a signal can end (tests/cli_process.py)."""
    return start_cli(["run", str(config_path)], env=env)


def wait_for_requests(server, n, proc, timeout=60.0):
    deadline = time.monotonic() + timeout
    while server.stats.total < n:
        assert proc.poll() is None, f"run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "server never saw the requests"
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "kill_points"),
    [(signal.SIGKILL, (6, 20)), (signal.SIGINT, (14,))],
    ids=["sigkill-twice", "sigint"],
)
def test_killed_run_resumes_without_repaying(synth_data, tmp_path, capsys, sig, kill_points):
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with FakeOpenAIServer(responder=auto, latency=0.05) as server:
        baseline = titjudge.evaluate(
            run_config(synth_data, tmp_path / "base", url=server.url, concurrency=CONCURRENCY)
        )
        full = server.stats.total
        assert full == 32
        server.reset_stats()

        config = run_config(synth_data, tmp_path / "crash", url=server.url, concurrency=CONCURRENCY)
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps(config))
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
        for point in kill_points:  # each kill lands later in the run, on a partly filled cache
            proc = start_run(path, env)
            wait_for_requests(server, point, proc)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
            if sig == signal.SIGINT:
                assert (
                    proc.returncode == 130 and "re-run to resume" in err and "Traceback" not in err
                )
            else:
                assert proc.returncode == -signal.SIGKILL
        assert server.stats.total < full + len(kill_points) * IN_FLIGHT

        capsys.readouterr()
        assert main(["run", str(path)]) == 0, capsys.readouterr().err
        paid = server.stats.total
        repeated = server.stats.duplicates(ok_only=True)
    # only calls in flight at a kill are asked again: at most IN_FLIGHT per kill
    assert full <= paid <= full + len(kill_points) * IN_FLIGHT
    assert repeated <= len(kill_points) * IN_FLIGHT
    history = tmp_path / "crash" / "runs" / "e2e"
    crash_dir = latest_run(history)
    # a killed run cannot clean up after itself: its staging dir stays, never a run dir;
    # an interrupted one (SIGINT) removes its own
    partial = sorted(p.name for p in history.iterdir() if p.name.endswith(".partial"))
    assert len(partial) == (len(kill_points) if sig == signal.SIGKILL else 0), partial
    finished = sorted(p.name for p in history.iterdir() if not p.name.endswith(".partial"))
    assert finished == sorted([crash_dir.name, "LATEST"])  # one run: the one that finished
    assert (crash_dir / "scores.csv").read_text() == (baseline.run_dir / "scores.csv").read_text()
    assert (crash_dir / "metrics.json").read_text() == (
        baseline.run_dir / "metrics.json"
    ).read_text()
