"""Which paths `titjudge.load_runs` reads (`report.analysis.runset.expand_paths`): of what a
glob matches, the runs; a path given exactly, as given. Laid out by hand as `titjudge run`
lays runs out (`report.runs`: `<run.out>/<name>/<run id>/` and `<name>/LATEST`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from titjudge.errors import DataError
from titjudge.report.analysis.runset import expand_paths

A, B = "20261125T002233Z-1a2b", "20261126T101010Z-0c3d"


def _run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "items.jsonl").write_text("")
    (folder / "summary.json").write_text("{}")
    return folder


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Two configs' runs with their LATEST files, an ablation's dir and a stray file."""
    out = tmp_path / "runs"
    _run(out / "demo" / A)
    _run(out / "demo" / B)
    (out / "demo" / "LATEST").write_text(B + "\n")
    _run(out / "other" / A)
    (out / "other" / "LATEST").write_text(A + "\n")
    grid = out / "grid" / A
    grid.mkdir(parents=True)
    (grid / "ablation.json").write_text("{}")
    (out / "grid" / "LATEST").write_text(A + "\n")
    (out / "demo" / "notes.txt").write_text("by hand")
    return out


def test_a_glob_over_config_folders_skips_latest_files_and_what_is_not_a_run(runs: Path) -> None:
    found = expand_paths(str(runs / "*" / "*"))
    assert found == [runs / "demo" / A, runs / "demo" / B, runs / "other" / A]


def test_a_glob_over_one_config_folder_reads_its_runs(runs: Path) -> None:
    # load_runs's docstring: "runs/demo/*"
    assert expand_paths(str(runs / "demo" / "*")) == [runs / "demo" / A, runs / "demo" / B]


def test_a_glob_over_run_out_reads_each_configs_latest_run(runs: Path) -> None:
    # a config folder is what load_run reads as its LATEST run; the ablation's is not a run
    assert expand_paths(str(runs / "*")) == [runs / "demo", runs / "other"]


def test_a_pattern_matching_no_run_says_what_it_matched(runs: Path) -> None:
    with pytest.raises(DataError, match=r"no run matches this pattern \(it matches 2 paths, none"):
        expand_paths(str(runs / "grid" / "*"))
    with pytest.raises(DataError, match=r"no run matches this pattern \(nothing\)"):
        expand_paths(str(runs / "nothing-*"))


def test_a_path_given_exactly_is_kept_for_load_run_to_judge(runs: Path) -> None:
    # named exactly, a LATEST file is the user's mistake to hear about (load_run says it)
    latest = runs / "demo" / "LATEST"
    assert expand_paths([latest, str(runs / "other" / "*")]) == [latest, runs / "other" / A]
