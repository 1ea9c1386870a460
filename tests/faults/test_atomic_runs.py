"""A run that fails or is interrupted part-way through writing leaves no half run: the
previous run and LATEST stay exactly as they were, and no staging dir is left behind.

Each failure is injected where it bites: the metrics raising after every answer is in, a full
disk (a real ENOSPC from /dev/full, tests/faults/full_disk.py) while items.jsonl is written
after scores.csv, and Ctrl-C between two run files. Every run is in-process: none of these
needs a process of its own."""

import json
from pathlib import Path

import full_disk
import pytest
from doubles.server import FakeOpenAIServer, build_responder
from fault_helpers import config, descriptions

import titjudge.agents.finish
import titjudge.report.run_dir
from titjudge.cli import main
from titjudge.errors import DataError


@pytest.fixture(scope="module")
def finished(fault_data, tmp_path_factory):
    """One finished run of the config, shared by the module's tests (each leaves it as it
    was, which is what each checks); yields (config path, runs folder)."""
    tmp = tmp_path_factory.mktemp("atomic")
    responder = build_responder("auto", descriptions=descriptions(fault_data))
    with FakeOpenAIServer(responder=responder) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")  # fake_key is per test
        path = tmp / "run.yaml"
        path.write_text(json.dumps(config(fault_data, server.url, tmp)))
        assert main(["run", str(path)]) == 0
        yield path, tmp / "runs"


@pytest.fixture
def first_run(finished, capsys):
    """The finished run: (config path, runs folder, snapshot of it as the test begins)."""
    path, runs = finished
    capsys.readouterr()
    return path, runs, snapshot(runs)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file and folder under `folder` (names, hidden ones too) with the files' bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in folder.rglob("*")
    }


def _one_line(err: str) -> str:
    """The one line that says what went wrong (stderr is no terminal here, so the progress
    display writes plain `progress:` records there too)."""
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if not line.startswith("progress: ")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.slow
def test_metrics_raising_leaves_the_previous_run_as_it_was(first_run, monkeypatch, capsys):
    path, runs, before = first_run

    def broken(*args, **kwargs):
        raise DataError("metrics: something about the scores is wrong")

    monkeypatch.setattr(titjudge.agents.finish, "evaluate_run", broken)
    assert main(["run", str(path), "--set", "judges.tit_llm.model=litellm:openai/other"]) == 2
    assert "something about the scores is wrong" in _one_line(capsys.readouterr().err)
    assert snapshot(runs) == before  # not even the new config.yaml


@pytest.mark.slow
def test_a_full_disk_mid_write_keeps_the_previous_run(first_run, monkeypatch, capsys):
    """scores.csv is written, then items.jsonl meets a full disk: one line, exit 2, and the
    new scores.csv is nowhere (before, it sat beside the previous run's items.jsonl)."""
    path, runs, before = first_run
    full_disk.install("items.jsonl", monkeypatch)
    code = main(["run", str(path), "--limit", "20"])
    err = capsys.readouterr().err
    assert code == 2, err
    line = _one_line(err)
    assert line.startswith("titjudge: error: ")
    assert line.endswith("items.jsonl: cannot write (No space left on device)")
    assert snapshot(runs) == before


def test_ctrl_c_between_two_run_files_keeps_the_previous_run(first_run, monkeypatch, capsys):
    path, runs, before = first_run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(titjudge.report.run_dir, "write_items", interrupted)
    assert main(["run", str(path), "--limit", "5"]) == 130
    assert "interrupted" in _one_line(capsys.readouterr().err)
    assert snapshot(runs) == before


def test_an_exact_out_dir_is_not_created_by_a_failed_run(first_run, tmp_path, monkeypatch, capsys):
    path, _, _ = first_run

    def broken(out, results):
        raise DataError(f"{out / 'items.jsonl'}: cannot write (No space left on device)")

    monkeypatch.setattr(titjudge.report.run_dir, "write_items", broken)
    assert main(["run", str(path), "--out", str(tmp_path / "exact")]) == 2
    assert "No space left on device" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "exact").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".exact")] == []


@pytest.mark.doubles
def test_the_full_disk_double_really_fails_with_enospc(tmp_path, monkeypatch):
    """The double itself: a write of the chosen file fails, others succeed."""
    from titjudge.files import atomic_write

    full_disk.install("items.jsonl", monkeypatch)
    atomic_write(tmp_path / "other.txt", "fine")
    with pytest.raises(DataError, match=r"items.jsonl: cannot write \(No space left on device\)"):
        atomic_write(tmp_path / "items.jsonl", "x" * 100_000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]
