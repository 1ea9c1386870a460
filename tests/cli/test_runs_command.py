"""`titjudge runs list [DIR]` and `titjudge runs prune DIR --keep N` on folders of runs laid
out by hand, the way `titjudge run` lays them out: `<run.out>/<name>/<run id>/` and LATEST."""

import json
from pathlib import Path

import pytest

from titjudge.cli import main
from titjudge.report.run_files import write_run_files

IDS = ["20261124T101010Z-aaaa", "20261125T002233Z-1a2b", "20261125T002233Z-ffff"]


def make_history(
    folder: Path, ids: list[str], latest: str | None, items: int = 8, listed: bool = True
) -> Path:
    """Runs laid out as `titjudge run` lays them out, files.json last (`listed`: a run from
    before files.json has none)."""
    for k, run_id in enumerate(ids):
        run = folder / run_id
        run.mkdir(parents=True)
        (run / "summary.json").write_text(json.dumps({"items": items, "failed_items": k}))
        (run / "scores.csv").write_text("item_id,variant,score,status\n")
        if listed:
            write_run_files(run)
    if latest is not None:
        (folder / "LATEST").write_text(latest + "\n")
    return folder


def output(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_shows_runs_oldest_first_and_marks_latest(tmp_path, capsys):
    history = make_history(tmp_path / "runs" / "tit-llm", IDS, latest=IDS[1])
    (history / ".20261125T010101Z-0000.partial").mkdir()  # a run going, or killed
    code, out, _ = output(capsys, "runs", "list", str(history))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"{history}: 3 runs"
    assert lines[1] == f"  {IDS[0]}  8 items, 0 failed"
    assert lines[2] == f"  {IDS[1]}  8 items, 1 failed  <- LATEST"
    assert lines[3] == f"  {IDS[2]}  8 items, 2 failed"
    assert "1 unfinished (.20261125T010101Z-0000.partial)" in lines[4]


def test_list_says_which_runs_have_no_files_json(tmp_path, capsys):
    """A run from before files.json lists as it did, saying that its files went unchecked."""
    history = make_history(tmp_path / "runs" / "old", IDS[:2], latest=IDS[1], listed=False)
    write_run_files(history / IDS[1])
    code, out, _ = output(capsys, "runs", "list", str(history))
    assert code == 0
    assert out.splitlines()[1:] == [
        f"  {IDS[0]}  8 items, 0 failed, no files.json",
        f"  {IDS[1]}  8 items, 1 failed  <- LATEST",
    ]


def test_list_of_a_run_out_folder_lists_every_name(tmp_path, capsys, monkeypatch):
    runs = tmp_path / "runs"
    make_history(runs / "b-config", IDS[:1], latest=IDS[0])
    make_history(runs / "a-config", IDS[1:], latest=None)  # no LATEST: the newest is latest
    (runs / "not-runs").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, _ = output(capsys, "runs", "list")  # DIR defaults to ./runs
    assert code == 0
    assert out.splitlines() == [
        "runs/a-config: 2 runs",
        f"  {IDS[1]}  8 items, 0 failed",
        f"  {IDS[2]}  8 items, 1 failed  <- LATEST",
        "runs/b-config: 1 run",
        f"  {IDS[0]}  8 items, 0 failed  <- LATEST",
    ]


def test_prune_keeps_the_newest_and_always_latest(tmp_path, capsys):
    history = make_history(tmp_path / "runs" / "x", IDS, latest=IDS[0])
    partial = history / ".20261125T010101Z-0000.partial"
    partial.mkdir()
    code, out, _ = output(capsys, "runs", "prune", str(history), "--keep", "1", "--dry-run")
    assert code == 0 and "would remove 1, kept 2" in out and f"would remove {IDS[1]}" in out
    assert sorted(p.name for p in history.iterdir() if p.name in IDS) == IDS  # dry run
    code, out, _ = output(capsys, "runs", "prune", str(history), "--keep", "1")
    assert code == 0 and "removed 1, kept 2" in out and f"removed {IDS[1]}" in out
    # the newest run is kept, and so is the one LATEST names although it is the oldest
    assert sorted(p.name for p in history.iterdir()) == sorted(
        [IDS[0], IDS[2], "LATEST", partial.name]
    )
    assert (history / "LATEST").read_text().strip() == IDS[0]
    assert (history / IDS[2] / "scores.csv").is_file()


def test_prune_of_a_run_out_folder_prunes_each_name(tmp_path, capsys):
    runs = tmp_path / "runs"
    make_history(runs / "a", IDS, latest=IDS[2])
    make_history(runs / "b", IDS[:2], latest=IDS[1])
    code, out, _ = output(capsys, "runs", "prune", str(runs), "--keep", "1")
    assert code == 0
    assert sorted(p.name for p in (runs / "a").iterdir()) == [IDS[2], "LATEST"]
    assert sorted(p.name for p in (runs / "b").iterdir()) == [IDS[1], "LATEST"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["prune", "{h}", "--keep", "0"], "--keep must be at least 1, got 0"),
        (["list", "{t}/nowhere"], "nowhere: not found"),
        (["list", "{t}/empty"], "empty: holds no runs"),
        (["prune", "{t}/empty", "--keep", "2"], "empty: holds no runs"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    history = make_history(tmp_path / "runs" / "x", IDS, latest=IDS[2])
    (tmp_path / "empty").mkdir()
    args = [a.format(h=history, t=tmp_path) for a in argv]
    code, _, err = output(capsys, "runs", *args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err
    assert sorted(p.name for p in history.iterdir()) == sorted([*IDS, "LATEST"])
