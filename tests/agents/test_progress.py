"""Progress for every paid phase (described, judged, pairs), on a terminal and in a log, and
one count of cache hits in the progress records, the printed usage, summary.json and
`titjudge cache stats`.

The two whole runs use `progress_data`, 2 prompts x 4 models (8 items, 12 pairs; the shared
`synth_data` has 16 items): the counts agree, and pairs are counted apart from items, at
any size.
"""

import asyncio
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from builders import run_config
from doubles.server import FakeOpenAIServer, build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

import titjudge
from titjudge.cli import main
from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig
from titjudge.records import ItemResult, Progress
from titjudge.records.calls import Usage
from titjudge.records.outcomes import Described, JudgeOutcome
from titjudge.report.progress import ProgressDisplay, progress_line
from titjudge.run.runner import ShowProgress, run_async

RECORD = re.compile(
    r"^progress: (?:(?P<title>.+?) · )?described (?P<described>\d+)/(?P<total>\d+) · "
    r"judged (?P<judged>\d+)/\d+ · pairs (?P<pairs>\d+)/(?P<pairs_total>\d+) · "
    r"failed (?P<failed>\d+) · cache hits (?P<hits>\d+)/(?P<calls>\d+) · spend (?P<spend>.+) · "
    r"ETA (?P<eta>--|\d+:\d\d:\d\d)$"
)
LLM = {"kind": "llm", "model": "litellm:openai/judge", "backoff_initial": 0.01, "max_attempts": 2}


@pytest.fixture(scope="module")
def progress_data(synthetic) -> Path:
    """A SYNTHETIC benchmark of 2 prompts x 4 models (8 items, 12 pairs of a prompt's images)."""
    return synthetic(2, 4)


def _result(failed=False):
    outcome = JudgeOutcome("v", "failed" if failed else "ok", score=None if failed else 1.0)
    return ItemResult(item=None, described=Described(text="x"), outcomes=[outcome])


def records(err: str) -> list[re.Match]:
    """Every progress record of a captured stderr; each line must parse in full."""
    lines = [line for line in err.splitlines() if line.startswith("progress:")]
    found = [RECORD.match(line) for line in lines]
    assert all(found), lines
    return found


def test_each_phase_has_its_count_and_the_eta_of_the_current_phase():
    now = [100.0]
    spent = Usage(calls=5, cache_hits=2, priced_cost=0.0123)
    ended = []
    progress = Progress(total=4, spent=lambda: spent, clock=lambda: now[0])
    progress.on_phase_end = lambda _, phase: ended.append(phase)
    progress.start()
    assert progress_line(progress) == (
        "described 0/4 · judged 0/4 · pairs 0/0 · failed 0 · cache hits 2/5 · "
        "spend $0.0123 · ETA --"
    )
    now[0] = 110.0
    progress.item_described()
    progress.item_described()
    # 2 of 8 units (a description and a judged item each count one) in 10 s: 6 left, 30 s
    assert progress.eta() == 30.0
    assert "described 2/4 · judged 0/4" in progress_line(progress, "row 1/2 sharp")
    assert progress_line(progress, "row 1/2 sharp").startswith("row 1/2 sharp · described")
    for _ in range(2):
        progress.item_described()
    progress.item_done(_result(failed=True))
    for _ in range(3):
        progress.item_done(_result())
    assert ended == ["described", "judged"] and progress.failed_items == 1
    # the pairwise phase has its own rate: 2 of 6 pairs in 4 s leave 8 s
    progress.pairs_begin(6)
    now[0] = 114.0
    progress.pairs_judged(2)
    assert progress_line(progress).endswith(
        "pairs 2/6 · failed 1 · cache hits 2/5 · spend $0.0123 · ETA 0:00:08"
    )
    progress.pairs_judged(4)
    assert ended == ["described", "judged", "pairs"] and progress.eta() == 0.0


def test_unpriced_spend_reads_cost_unknown():
    spent = Usage(calls=2, cache_hits=1, unpriced_calls=1)
    line = progress_line(Progress(total=4, done=1, spent=lambda: spent))
    assert "cache hits 1/2 · spend cost unknown (1 unpriced call) · ETA --" in line


class Log(io.StringIO):
    """A log file: not a terminal."""

    def isatty(self):
        return False


class Terminal(io.StringIO):
    def isatty(self):
        return True


async def _show(stream, interval, steps):
    progress = Progress(total=3)
    progress.start()
    async with ProgressDisplay(progress, show=True, stream=stream, interval=interval):
        for _ in range(3):
            progress.item_described()
            await asyncio.sleep(steps)
        progress.pairs_begin(2)
        for _ in range(3):
            progress.item_done(_result())
        progress.pairs_judged(2)
    return progress


def test_a_log_gets_plain_records_at_intervals_and_at_each_phase_end():
    log = Log()
    asyncio.run(_show(log, interval=0.02, steps=0.1))
    text = log.getvalue()
    assert "\x1b" not in text
    found = records(text)
    assert [m["described"] for m in found].count("3") >= 3  # three phase ends, described 3/3
    ends = [m.group(0) for m in found if m["judged"] == "3" or m["described"] == "3"]
    assert ends[-1].startswith("progress: described 3/3 · judged 3/3 · pairs 2/2")
    # the interval records: the 0.3 s of describing shows describing in progress
    assert any(m["described"] in ("1", "2") for m in found)


def test_a_terminal_gets_a_bar_row_per_phase():
    screen = Terminal()
    asyncio.run(_show(screen, interval=10.0, steps=0.0))
    text = screen.getvalue()
    assert "\x1b[" in text and "progress:" not in text
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    for phase, done in (("described", "3/3"), ("judged", "3/3"), ("pairs", "2/2")):
        assert re.search(rf"{phase}\s.*{done}", plain), (phase, plain[-600:])
    assert "cache hits 0/0" in plain


def test_a_log_names_a_stopped_model_the_moment_it_stops():
    log, stopped = Log(), []

    async def show():
        progress = Progress(total=4, stopped=lambda: list(stopped))
        # an hour between interval records: any record below comes from an item event
        async with ProgressDisplay(progress, show=True, stream=log, interval=3600):
            progress.item_described()
            progress.item_done(_result(failed=True))
            assert "stopped" not in log.getvalue()
            stopped.append("litellm:openai/judge (connection refused (http://127.0.0.1:9/v1))")
            progress.item_described()
            await asyncio.sleep(0)
            named = log.getvalue().splitlines()
            assert named, "no record when the model stopped"
            assert named[-1] == (
                "progress: described 2/4 · judged 1/4 · pairs 0/0 · failed 1 · stopped: "
                "litellm:openai/judge (connection refused (http://127.0.0.1:9/v1)) · "
                "cache hits 0/0 · spend $0.0000 · ETA --"
            )

    asyncio.run(show())
    # the bar's text names it too (a terminal), as every later record does
    line = progress_line(Progress(total=1, stopped=lambda: ["hf:x (quota exhausted)"]))
    assert "failed 0 · stopped: hf:x (quota exhausted) · cache hits" in line


def test_nothing_is_shown_without_progress():
    log = Log()

    async def hidden():
        progress = Progress(total=1)
        async with ProgressDisplay(progress, show=False, stream=log, interval=0.001):
            progress.item_described()
            await asyncio.sleep(0.02)
            progress.item_done(_result())

    asyncio.run(hidden())
    assert log.getvalue() == ""


def last_run_counts(printed: str) -> tuple[int, int]:
    found = re.search(r"last run \(e2e\): (\d+) hits, (\d+) misses", printed)
    assert found, printed
    return int(found[1]), int(found[2])


@pytest.mark.slow
def test_cache_hits_agree_in_records_summary_and_cache_stats(progress_data, tmp_path, capsys):
    """Two judges asking the same question share one call: the second is answered without
    asking the model, so it is a cache hit everywhere. (Before, the progress bar counted it
    while summary.json and `cache stats` counted only disk-cache lookups, so on 16 items the
    bar read 16/48 and the files 0 hits.)"""
    auto = build_responder("auto", descriptions=stored_descriptions(progress_data))
    with FakeOpenAIServer(responder=auto) as server:
        judges = [{"name": name, **LLM, "api_base": server.url} for name in ("a", "b")]
        config = run_config(progress_data, tmp_path, url=server.url, judges=judges)
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config))
        cache_dir = str(tmp_path / "cache")
        expected = [(8, 24), (24, 24)]  # dedup; then the re-run answers all from the cache
        for hits, calls in expected:
            capsys.readouterr()
            assert main(["run", str(path)]) == 0
            captured = capsys.readouterr()
            found = records(captured.err)
            assert "\x1b" not in captured.err
            last = found[-1]
            assert (last["described"], last["judged"], last["total"]) == ("8", "8", "8")
            assert (int(last["hits"]), int(last["calls"])) == (hits, calls)
            summary = json.loads(
                (latest_run(tmp_path / "runs" / "e2e") / "summary.json").read_text()
            )
            cache = summary["cache"]
            assert (cache["hits"], cache["calls"], cache["misses"]) == (hits, calls, calls - hits)
            usage = summary["usage"]
            assert sum(u["cache_hits"] for u in usage.values()) == hits
            printed = re.findall(r"(\d+) cache hits", captured.out)  # usage per role
            assert sum(map(int, printed)) == hits
            assert main(["cache", "stats", "--cache-dir", cache_dir]) == 0
            assert last_run_counts(capsys.readouterr().out) == (hits, calls - hits)
        assert server.stats.total == 16  # 8 descriptions + 8 judge calls, once each


@pytest.mark.slow
def test_pairwise_progress_and_library_silence(progress_data, tmp_path, capsys):
    """Pairs done count apart from items; titjudge.evaluate without progress prints nothing."""
    auto = build_responder("auto", descriptions=stored_descriptions(progress_data))
    with FakeOpenAIServer(responder=auto) as server:
        judges = [{"name": "pair", **LLM, "kind": "pairwise", "api_base": server.url}]
        raw = run_config(progress_data, tmp_path, url=server.url, judges=judges)
        titjudge.evaluate(raw)
        assert capsys.readouterr().err == ""
        config = validate_config(raw, RunConfig, "config")
        asyncio.run(run_async(config, progress=ShowProgress(title="again")))
    found = records(capsys.readouterr().err)
    assert {m["title"] for m in found} == {"again"}
    assert (found[-1]["pairs"], found[-1]["pairs_total"]) == ("12", "12")
    assert found[-1]["judged"] == "8" and found[-1]["eta"] == "0:00:00"
