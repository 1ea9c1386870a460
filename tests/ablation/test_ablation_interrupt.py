"""Ctrl-C on `titjudge ablation` (and `titjudge run`) stops at once, even while a worker
thread is busy (a local model loading, a batch, a large image decoding), and keeps every
answer already given: a re-run asks the server nothing it answered before.

"At once" is checked without a clock: the busy thread holds on for ten minutes, so a run
that waited for it would still be running when the test gives up on it (the old behaviour);
one that stops without it has exited, however loaded the machine (measured 0.6-1.4 s on a
quiet one: a measurement, not a unit test's bound).

The run is a warm child process (tests/cli_process.py): a process of its own that leaves,
after an interrupt, through the same `os._exit` as `python -m titjudge` does."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import time
from pathlib import Path

import builders
import pytest
from cli_process import run_cli, start_cli
from doubles.server import FakeOpenAIServer, build_responder

#: how long the busy worker thread holds on: far beyond any wait of the test
BUSY_FOR = 600.0
#: how long the test waits for the interrupted child to exit before calling it hung
GIVE_UP_AFTER = 120.0


def slow_to_read(name: str) -> None:
    """In the child: sizing up the image called `name` (its header read in a worker thread,
    before it takes one of the loader's slots) takes BUSY_FOR seconds, as a local model's load or a huge
    image's decode holds a thread, while every other item goes on; so the interrupt lands while
    that thread runs. (A delay inside the slot held every other image back until it ended, so
    the interrupt came after it.)"""
    import titjudge.data.images as images

    measure = images.header_pixels  # the loader's header probe

    def header_pixels(path):
        if str(path).endswith(name):
            time.sleep(BUSY_FOR)
        return measure(path)

    images.header_pixels = header_pixels


def _config(bench: Path, url: str, tmp: Path, command: str) -> dict:
    judge = builders.llm_judge(url, max_attempts=2)
    if command == "run":
        return builders.run_config(
            bench, tmp, url=url, name="r", judges=[judge], max_attempts=2, concurrency=4
        )
    sharp = {
        "name": "sharp",
        "model": builders.LOOPBACK_VLM,
        **builders.loopback(url, max_attempts=2),
    }
    return builders.grid_config(
        bench,
        tmp,
        name="g",
        describers=[sharp],
        comparers=[judge, builders.lexical()],
        concurrency=4,
    )


@pytest.mark.slow
@pytest.mark.parametrize("command", ["ablation", "run"])
def test_ctrl_c_stops_at_once_and_keeps_answers(bench, tmp_path, monkeypatch, command):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    manifest = [json.loads(line) for line in (bench / "manifest.jsonl").read_text().splitlines()]
    slow_image = Path(manifest[0]["image"]).name  # loading from the start
    with FakeOpenAIServer(responder=build_responder("auto"), latency=0.2) as server:
        path = tmp_path / "config.yaml"
        path.write_text(json.dumps(_config(bench, server.url, tmp_path, command)))
        child = start_cli(
            [command, str(path)], cwd=tmp_path, before=functools.partial(slow_to_read, slow_image)
        )
        deadline = time.monotonic() + 60
        while server.stats.total < 8:  # answers given: they must be cached
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the server never saw the run's requests"
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        try:
            _, err = child.communicate(timeout=GIVE_UP_AFTER)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            pytest.fail("Ctrl-C did not stop the run: it waited for the busy worker thread")
        assert child.returncode == 130, err
        assert "re-run to resume" in err and "Traceback" not in err
        assert not any((tmp_path / "runs").rglob("*.partial"))  # no half run left behind

        rerun = run_cli([command, str(path)], cwd=tmp_path, timeout=120)
        assert rerun.returncode in (0, 1), rerun.stderr
        # nothing answered before the interrupt was asked (and paid for) again
        assert server.stats.duplicates(ok_only=True) == 0
