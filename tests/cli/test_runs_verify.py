"""`titjudge runs verify DIR` checks a whole folder of runs against their files.json, one line
per run that does not hold, exit 2 if any; `titjudge runs list` checks sizes (and the
summary.json it reads) and names a run whose files do not match. The runs are copies of a
real one (`made_run`, tests/cli/conftest.py), laid out as `titjudge run` lays them out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from titjudge import __version__
from titjudge.cli import main
from titjudge.report.run_files import write_run_files

IDS = ["20261124T101010Z-aaaa", "20261125T002233Z-1a2b", "20261125T002233Z-ffff"]


def history(folder: Path, made_run: Path, ids: list[str], latest: str) -> Path:
    for run_id in ids:
        shutil.copytree(made_run, folder / run_id)
    (folder / "LATEST").write_text(latest + "\n")
    return folder


def cut_in_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(["runs", "verify", *argv])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.strip().splitlines()


def test_every_run_of_a_tree_is_checked_and_each_bad_one_named(
    made_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    a = history(runs / "a", made_run, IDS, latest=IDS[2])
    b = history(runs / "b", made_run, IDS[:1], latest=IDS[0])
    cut_in_half(a / IDS[0] / "scores.csv")  # not the run LATEST names: every run is checked
    items = a / IDS[1] / "items.jsonl"
    items.write_bytes(items.read_bytes().replace(b'"ok"', b'"OK"', 1))  # same size
    (b / IDS[0] / "files.json").unlink()  # a run from before files.json
    (a / ".20261125T010101Z-0000.partial").mkdir()
    code, out, err = verify(capsys, str(runs))
    assert code == 2
    assert out[0].startswith(f"{a / IDS[0]}: scores.csv: ") and "but the run wrote" in out[0]
    assert out[1] == (
        f"{a / IDS[1]}: items.jsonl: changed since the run wrote it (same size, another "
        "sha256 than files.json's)"
    )
    assert out[2] == (
        f"{b / IDS[0]}: no manifest (written before files.json, by titjudge {__version__}): "
        "only its lines and counts could be checked, and they hold"
    )
    assert out[3] == (
        "4 runs checked: 1 holds, 2 do not, 1 has no files.json, "
        "1 unfinished .partial dir passed over"
    )
    assert len(out) == 4
    assert err == ["titjudge: error: 2 of 4 runs do not hold (named above)"]


@pytest.mark.parametrize("which", ["tree", "history", "run"])
def test_runs_that_hold_exit_0(
    made_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    runs = tmp_path / "runs"
    history(runs / "a", made_run, IDS, latest=IDS[0])
    target = {"tree": runs, "history": runs / "a", "run": runs / "a" / IDS[1]}[which]
    code, out, err = verify(capsys, str(target))
    n = 1 if which == "run" else 3
    assert (code, out, err) == (
        0,
        [f"{n} run{'s' if n > 1 else ''} checked: {n} hold{'s' if n == 1 else ''}"],
        [],
    )


def test_an_old_run_with_a_bad_count_does_not_hold(
    made_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No files.json is said, not passed silently; what can still be checked is checked."""
    run = Path(shutil.copytree(made_run, tmp_path / "old"))
    (run / "files.json").unlink()
    lines = (run / "items.jsonl").read_text().splitlines(keepends=True)
    (run / "items.jsonl").write_text("".join(lines[:-1]))  # one whole line gone
    code, out, _ = verify(capsys, str(run))
    assert code == 2
    assert out[0] == (
        f"{run}: items.jsonl: {len(lines) - 1} lines, but summary.json counts {len(lines)} "
        "(item, variant) results"
    )


def test_a_grid_is_checked_with_each_of_its_rows(
    made_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ablation grid's dir lists its own files; each row under rows/ lists its own."""
    grid = tmp_path / "grid"
    for row in ("qwen", "gemma"):
        shutil.copytree(made_run, grid / "rows" / row)
    (grid / "ablation.json").write_text(json.dumps({"rows": [{}, {}]}))
    (grid / "table4.md").write_text("| a |\n")
    listing = write_run_files(grid)
    assert set(listing.files) == {"ablation.json", "table4.md"}  # the rows are their own
    assert verify(capsys, str(grid))[0] == 0
    cut_in_half(grid / "rows" / "gemma" / "scores.csv")
    (grid / "table4.md").write_text("| b |\n")
    code, out, _ = verify(capsys, str(grid))
    assert code == 2
    assert out[0].startswith(f"{grid}: table4.md: changed since the run wrote it")
    assert out[1].startswith(f"{grid / 'rows' / 'gemma'}: scores.csv: ")
    assert out[2] == "3 runs checked: 1 holds, 2 do not"


def test_list_names_a_run_whose_file_was_cut_and_exits_2(
    made_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = history(tmp_path / "runs" / "a", made_run, IDS[:2], latest=IDS[1])
    written = (a / IDS[0] / "scores.csv").stat().st_size
    cut_in_half(a / IDS[0] / "scores.csv")
    code = main(["runs", "list", str(a)])
    captured = capsys.readouterr()
    out, err = captured.out.splitlines(), captured.err.strip().splitlines()
    assert code == 2
    assert out[1].startswith(f"  {IDS[0]}  ") and out[3].startswith(f"  {IDS[1]}  ")
    assert out[2] == (
        f"    does not hold: scores.csv: {written // 2:,} bytes, but the run wrote "
        f"{written:,} bytes (files.json): cut or changed since it was written"
    )
    assert err == [
        "titjudge: error: 1 run does not match its files.json (named above; "
        f"`titjudge runs verify {a}` checks every sha256)"
    ]


def test_list_checks_sizes_and_the_summary_it_reads_verify_every_sha256(
    made_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What each costs: `runs list` stats each listed file and hashes summary.json, the file
    it reads; a same-size change elsewhere is for `runs verify` (and every reader) to find."""
    a = history(tmp_path / "runs" / "a", made_run, IDS[:2], latest=IDS[1])
    items = a / IDS[0] / "items.jsonl"
    items.write_bytes(items.read_bytes().replace(b'"ok"', b'"OK"', 1))
    assert main(["runs", "list", str(a)]) == 0
    summary = a / IDS[1] / "summary.json"
    summary.write_bytes(summary.read_bytes().replace(b'"items": ', b'"items":0', 1))
    assert main(["runs", "list", str(a)]) == 2
    out = capsys.readouterr().out
    assert "does not hold: summary.json: changed since the run wrote it" in out
    assert "items.jsonl" not in out
    assert main(["runs", "verify", str(a)]) == 2
    assert "items.jsonl: changed since" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("where", "says"),
    [("nowhere", "nowhere: not found"), ("empty", "empty: holds no runs")],
)
def test_a_folder_without_runs_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, says: str
) -> None:
    (tmp_path / "empty").mkdir()
    code, out, err = verify(capsys, str(tmp_path / where))
    assert code == 2 and out == [] and len(err) == 1 and says in err[0]
