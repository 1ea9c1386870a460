"""Runs are kept: each run of a config gets its own `<run.out>/<name>/<run id>/`, LATEST names
the last to finish, and `--out DIR` names a run dir exactly without ever overwriting one."""

import csv
import json
import re
import time

import pytest
from builders import run_config, write_config
from doubles.server import FakeOpenAIServer, build_responder
from pipeline_helpers import items_of, stored_descriptions
from run_dirs import latest_run

import titjudge
from titjudge.cli import main
from titjudge.errors import DataError

RUN_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{4}$")


@pytest.fixture
def server(synth_data):
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with FakeOpenAIServer(responder=auto) as srv:
        yield srv


@pytest.fixture
def config_path(synth_data, server, tmp_path):
    return write_config(run_config(synth_data, tmp_path, url=server.url), tmp_path)


def snapshot(folder):
    """Every file under `folder` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def run_ids(history):
    return sorted(p.name for p in history.iterdir() if p.is_dir())


@pytest.mark.slow
def test_a_variant_run_keeps_the_first_and_latest_names_the_second(
    config_path, server, tmp_path, capsys
):
    """The issue's case: the same config, then one judge's model changed by --set. Both runs'
    scores stay, each under its own id, each config.yaml saying which model it used."""
    history = tmp_path / "runs" / "e2e"
    assert main(["run", str(config_path)]) == 0
    (first,) = run_ids(history)
    before = snapshot(history / first)
    assert (
        main(["run", str(config_path), "--set", "judges.tit_llm.model=litellm:openai/judge2"]) == 0
    )
    out = capsys.readouterr().out
    ids = run_ids(history)
    assert len(ids) == 2 and ids[0] == first and all(RUN_ID.match(i) for i in ids)
    second = ids[1]
    assert (history / "LATEST").read_text() == second + "\n"
    assert snapshot(history / first) == before  # the first run, byte for byte
    for run_id, model in ((first, "openai/judge"), (second, "openai/judge2")):
        record = (history / run_id / "config.yaml").read_text()
        assert f"model: litellm:{model}\n" in record
        assert len((history / run_id / "scores.csv").read_text().splitlines()) == 1 + 16 * 2
    assert str(history / second) in "".join(out.split())  # "run dir: ..." (however wrapped)
    # nothing else in the name dir: no staging dir, no file of either run at its top
    assert sorted(p.name for p in history.iterdir()) == sorted([first, second, "LATEST"])


def test_two_runs_in_one_second_get_two_dirs(tmp_path, monkeypatch):
    """Ids carry 16 random bits after the second; a drawn id that is taken (a run being
    written under it, or finished) is drawn again."""
    from titjudge.report import runs

    taken = "20261125T002233Z-1a2b"
    draws = iter([taken, taken, "20261125T002233Z-ffff", taken, "20261125T002233Z-0c0d"])
    monkeypatch.setattr(runs, "new_run_id", lambda: next(draws))
    history = tmp_path / "runs" / "x"
    one = runs.stage_run(history=history)
    two = runs.stage_run(history=history)  # `taken` is being written: drawn again
    assert (one.run_id, two.run_id) == (taken, "20261125T002233Z-ffff")
    (one.staging / "summary.json").write_text("{}")
    assert one.commit() == history / taken
    three = runs.stage_run(history=history)  # `taken` is a finished run now: drawn again
    assert three.run_id == "20261125T002233Z-0c0d"
    monkeypatch.undo()
    # real ids, back to back (several in one millisecond): distinct
    found = [runs.stage_run(history=tmp_path / "real").run_id for _ in range(50)]
    assert len(set(found)) == 50 and all(RUN_ID.match(i) for i in found)
    # a millisecond apart or more, they sort by start time
    spaced = []
    for _ in range(5):
        spaced.append(runs.stage_run(history=tmp_path / "spaced").run_id)
        time.sleep(0.002)
    assert sorted(spaced) == spaced


def test_a_run_id_is_the_start_time_to_the_millisecond():
    from datetime import datetime, timezone

    from titjudge.report import runs

    at = datetime(2026, 11, 25, 0, 22, 33, 999_999, tzinfo=timezone.utc)
    found = {runs.new_run_id(at) for _ in range(200)}
    assert {i[:17] for i in found} == {"20261125T002233Z-"}
    assert {int(i[17:], 16) // 64 for i in found} == {999}  # the millisecond
    assert len(found) > 32  # and 64 random values beside it
    earlier = runs.new_run_id(at.replace(microsecond=998_000))
    assert all(earlier < i for i in found)


def test_a_clash_at_the_end_takes_a_new_id_and_overwrites_nothing(tmp_path, monkeypatch):
    from titjudge.report import runs

    history = tmp_path / "runs" / "x"
    taken = "20261125T002233Z-1a2b"
    draws = iter([taken, "20261125T002233Z-2b3c"])
    monkeypatch.setattr(runs, "new_run_id", lambda: next(draws))
    staged = runs.stage_run(history=history)
    (staged.staging / "summary.json").write_text('{"mine": 1}')
    (history / taken).mkdir()  # another run finished under the same id meanwhile
    (history / taken / "summary.json").write_text('{"theirs": 1}')
    assert staged.commit() == history / "20261125T002233Z-2b3c"
    assert (history / taken / "summary.json").read_text() == '{"theirs": 1}'
    assert (history / "LATEST").read_text().strip() == "20261125T002233Z-2b3c"


@pytest.mark.slow
def test_out_names_the_run_dir_exactly_and_never_overwrites_one(
    config_path, server, tmp_path, capsys
):
    target = tmp_path / "exact"
    assert main(["run", str(config_path), "--limit", "3", "--out", str(target)]) == 0
    assert (target / "scores.csv").is_file() and not (target / "LATEST").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert not (tmp_path / "runs").exists()  # --out keeps the run out of the history
    before, asked = snapshot(target), server.stats.total
    capsys.readouterr()
    assert main(["run", str(config_path), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"--out {target}: already exists and is not empty" in err
    assert snapshot(target) == before and server.stats.total == asked
    empty = tmp_path / "empty"
    empty.mkdir()  # an empty dir is no run: it is used
    assert main(["run", str(config_path), "--limit", "3", "--out", str(empty)]) == 0
    assert (empty / "scores.csv").read_bytes() == before["scores.csv"]


def _metrics_json(capsys, target, data):
    capsys.readouterr()
    args = ["--pairs", str(data / "pairs.csv"), "--manifest", str(data / "manifest.jsonl")]
    assert main(["metrics", str(target), *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_audit_metrics_and_the_api_read_a_name_dirs_latest_run(
    synth_data, config_path, server, tmp_path, capsys
):
    history = tmp_path / "runs" / "e2e"
    assert main(["run", str(config_path)]) == 0
    assert main(["run", str(config_path), "--limit", "4"]) == 0
    first, second = run_ids(history)
    late_item = items_of(synth_data)[10]["item_id"]  # judged by the first run only

    assert titjudge.find_run(history) == history / second == latest_run(history)
    assert titjudge.find_run(history / first) == history / first
    listed = titjudge.list_runs(history)
    assert [(e.run_id, e.latest) for e in listed] == [(first, False), (second, True)]
    clean = "0 failed; fallback: none; stopped: none"
    assert [e.what for e in listed] == [f"16 items, {clean}", f"4 items, {clean}"]
    with pytest.raises(DataError, match="not a run dir, nor a folder of runs"):
        titjudge.find_run(tmp_path)

    # audit: the name dir is its latest run (4 items); a run id dir is that run
    capsys.readouterr()
    assert main(["audit", str(history), "--item", late_item]) == 2
    assert f"{history / second}: no item {late_item!r}" in capsys.readouterr().err
    assert main(["audit", str(history / first), "--item", late_item]) == 0
    assert late_item in capsys.readouterr().out

    # metrics: a name dir or a run dir reads that run's scores.csv
    latest = _metrics_json(capsys, history, synth_data)
    older = _metrics_json(capsys, history / first, synth_data)
    assert (
        latest["variants"]["lexical"]["n_items"] == 4
        and older["variants"]["lexical"]["n_items"] == 16
    )
    with (history / first / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert (
        len(rows)
        == older["variants"]["lexical"]["n_items"] + older["variants"]["tit_llm"]["n_items"]
    )

    # LATEST is the truth: pointing it back at the first run makes that the latest
    (history / "LATEST").write_text(first + "\n")
    assert titjudge.find_run(history) == history / first
    (history / "LATEST").write_text("nonsense\n")
    with pytest.raises(DataError, match="names run 'nonsense'"):
        titjudge.find_run(history)


@pytest.mark.slow
def test_a_run_dir_from_before_run_history_still_reads(tmp_path, capsys, config_path, server):
    """Files straight in <run.out>/<name> (how runs were written before): that dir is a run
    dir; once a new run is kept there, LATEST decides and the old files are left alone."""
    history = tmp_path / "runs" / "e2e"
    assert main(["run", str(config_path), "--limit", "2", "--out", str(history)]) == 0
    old = snapshot(history)
    assert titjudge.find_run(history) == history
    capsys.readouterr()
    assert main(["audit", str(history)]) == 0
    assert "audit of run e2e: 1 human pairs" in capsys.readouterr().out
    assert main(["run", str(config_path), "--limit", "3"]) == 0
    (new,) = run_ids(history)
    assert titjudge.find_run(history) == history / new
    assert {k: v for k, v in snapshot(history).items() if "/" not in k and k != "LATEST"} == old
