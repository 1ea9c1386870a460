"""`titjudge runs list [DIR]` and `titjudge runs prune DIR --keep N` on folders of runs laid
out by hand, the way `titjudge run` lays them out: `<run.out>/<name>/<run id>/` and LATEST.
Each run's line says its failed items, the variants that fell back and the models stopped
(`?` where its summary.json does not record them)."""

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
    unknown = "fallback: ?; stopped: ?"  # summaries that record neither
    assert lines[1] == f"  {IDS[0]}  8 items, 0 failed; {unknown}"
    assert lines[2] == f"  {IDS[1]}  8 items, 1 failed; {unknown}  <- LATEST"
    assert lines[3] == f"  {IDS[2]}  8 items, 2 failed; {unknown}"
    assert "1 unfinished (.20261125T010101Z-0000.partial)" in lines[4]


def test_list_says_which_runs_have_no_files_json(tmp_path, capsys):
    """A run from before files.json lists as it did, saying that its files went unchecked."""
    history = make_history(tmp_path / "runs" / "old", IDS[:2], latest=IDS[1], listed=False)
    write_run_files(history / IDS[1])
    code, out, _ = output(capsys, "runs", "list", str(history))
    assert code == 0
    unknown = "fallback: ?; stopped: ?"  # summaries that record neither
    assert out.splitlines()[1:] == [
        f"  {IDS[0]}  8 items, 0 failed; {unknown}; no files.json",
        f"  {IDS[1]}  8 items, 1 failed; {unknown}  <- LATEST",
    ]


def test_list_of_a_run_out_folder_lists_every_name(tmp_path, capsys, monkeypatch):
    runs = tmp_path / "runs"
    make_history(runs / "b-config", IDS[:1], latest=IDS[0])
    make_history(runs / "a-config", IDS[1:], latest=None)  # no LATEST: the newest is latest
    (runs / "not-runs").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, _ = output(capsys, "runs", "list")  # DIR defaults to ./runs
    assert code == 0
    unknown = "fallback: ?; stopped: ?"
    assert out.splitlines() == [
        "runs/a-config: 2 runs",
        f"  {IDS[1]}  8 items, 0 failed; {unknown}",
        f"  {IDS[2]}  8 items, 1 failed; {unknown}  <- LATEST",
        "runs/b-config: 1 run",
        f"  {IDS[0]}  8 items, 0 failed; {unknown}  <- LATEST",
    ]


def test_list_names_the_fallback_and_the_stopped_models_of_each_run(tmp_path, capsys):
    history = make_history(tmp_path / "x", IDS, latest=IDS[2])
    stopped = {"model": "litellm:openai/judge", "reason": "connection refused", "requests": 5}
    origin = {"fallback": "lexical", "model": "litellm:openai/judge", "n_scored": 8}
    summaries = [
        # as `titjudge run` writes it: the origins, the stopped model
        {
            "items": 8,
            "failed_items": 0,
            "variants": {"tit_llm": {"ok": 0, "fallback": 8, "failed": 0}},
            "origins": {"tit_llm": {**origin, "n_fallback": 8, "fallback_share": 1.0}},
            "failures": {"groups": [], "stopped": [stopped]},
        },
        # an older summary: status counts, no origins (so no fallback judge's name)
        {
            "items": 8,
            "failed_items": 0,
            "variants": {"tit_llm": {"ok": 5, "fallback": 3, "failed": 0}},
            "failures": {"groups": [], "stopped": []},
        },
        {
            "items": 8,
            "failed_items": 1,
            "variants": {"tit_llm": {"ok": 7, "fallback": 0, "failed": 1}},
            "origins": {"tit_llm": {**origin, "n_scored": 7, "fallback_share": 0.0}},
            "failures": {"groups": [], "stopped": []},
        },
    ]
    for run_id, summary in zip(IDS, summaries, strict=True):
        (history / run_id / "summary.json").write_text(json.dumps(summary))
        write_run_files(history / run_id)  # as the run lists what it wrote
    code, out, _ = output(capsys, "runs", "list", str(history))
    assert code == 0
    assert out.splitlines()[1:] == [
        f"  {IDS[0]}  8 items, 0 failed; fallback: tit_llm 8 of 8 (100%) from lexical; "
        "stopped: litellm:openai/judge",
        f"  {IDS[1]}  8 items, 0 failed; fallback: tit_llm 3 of 8 (38%); stopped: none",
        f"  {IDS[2]}  8 items, 1 failed; fallback: none; stopped: none  <- LATEST",
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
