"""Every reader of a run dir checks its files against files.json and names the one that does
not match, in one line, exit 2 (issue 48: a scores.csv cut in half went unnoticed by audit,
compare, export and `load_run`; `metrics RUN_DIR` printed a table over a cut or binary
items.jsonl; `compare` blamed an empty items.jsonl on "no human pairs" and reported a config
change for a missing metrics.json). A run dir from before files.json (`legacy`: its
files.json removed) gets the checks its files allow, and the messages name the real cause
there too. Each test damages a copy of a real run (`run_copy`, tests/cli/conftest.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import builders
import pytest

import titjudge
from titjudge.cli import main
from titjudge.errors import DataError
from titjudge.files import load_yaml


def cut_in_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def binary_of_the_same_size(path: Path) -> None:
    size = path.stat().st_size
    path.write_bytes((bytes(range(128, 256)) * (size // 128 + 1))[:size])


def make_legacy(run: Path) -> None:
    """The run as titjudge wrote it before files.json."""
    (run / "files.json").unlink(missing_ok=True)


def refusal(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one stderr line of a command that must exit 2."""
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1, err
    return err[0]


def pairs_csv(run: Path) -> str:
    """The human pairs the run was scored against, as its config.yaml names them."""
    return str(load_yaml(run / "config.yaml")["data"]["human_pairs"])


READERS: dict[str, Callable[[Path, Path], list[str]]] = {
    "audit": lambda run, good: ["audit", str(run)],
    "audit --json": lambda run, good: ["audit", str(run), "--json"],
    "compare": lambda run, good: ["compare", str(good), str(run)],
    "export": lambda run, good: ["export", str(run), "--format", "csv", "--out", str(run.parent)],
    "metrics": lambda run, good: ["metrics", str(run)],
    "metrics --pairs": lambda run, good: ["metrics", str(run), "--pairs", pairs_csv(good)],
    "metrics scores.csv": lambda run, good: [
        "metrics",
        str(run / "scores.csv"),
        "--pairs",
        pairs_csv(good),
    ],
}


@pytest.mark.parametrize("reader", list(READERS))
def test_a_cut_scores_csv_makes_every_reader_exit_2_naming_it(
    run_copy: Path, made_run: Path, capsys: pytest.CaptureFixture[str], reader: str
) -> None:
    """The issue's done-when check (`audit` exits 2 naming a cut scores.csv), for each reader:
    the numbers every one of them shows stand on that file."""
    written = (run_copy / "scores.csv").stat().st_size
    cut_in_half(run_copy / "scores.csv")
    line = refusal(capsys, READERS[reader](run_copy, made_run))
    assert (
        f"{run_copy / 'scores.csv'}: {written // 2:,} bytes, but the run wrote {written:,}" in line
    )


def test_load_run_refuses_a_cut_scores_csv_naming_it(run_copy: Path) -> None:
    cut_in_half(run_copy / "scores.csv")
    with pytest.raises(DataError, match=r"scores\.csv: \S+ bytes, but the run wrote"):
        titjudge.load_run(run_copy)
    with pytest.raises(DataError, match=r"scores\.csv: "):
        titjudge.load_runs([run_copy])


@pytest.mark.parametrize(
    ("damage", "legacy", "says"),
    [
        (cut_in_half, False, "bytes, but the run wrote"),
        (binary_of_the_same_size, False, "changed since the run wrote it (same size"),
        (cut_in_half, True, "cut: line"),
        (binary_of_the_same_size, True, "not UTF-8 text"),
    ],
    ids=["cut", "binary", "legacy-cut", "legacy-binary"],
)
def test_metrics_of_a_run_refuses_a_cut_or_binary_items_jsonl(
    run_copy: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], None],
    legacy: bool,
    says: str,
) -> None:
    """`titjudge metrics RUN_DIR` printed the table (exit 0) over such an items.jsonl."""
    if legacy:
        make_legacy(run_copy)
    damage(run_copy / "items.jsonl")
    line = refusal(capsys, ["metrics", str(run_copy)])
    assert f"{run_copy / 'items.jsonl'}: " in line and says in line, line
    assert capsys.readouterr().out == ""  # no table


@pytest.mark.parametrize("legacy", [False, True], ids=["listed", "legacy"])
def test_compare_names_an_empty_items_jsonl_not_missing_human_pairs(
    run_copy: Path, made_run: Path, capsys: pytest.CaptureFixture[str], legacy: bool
) -> None:
    if legacy:
        make_legacy(run_copy)
    (run_copy / "items.jsonl").write_bytes(b"")
    line = refusal(capsys, ["compare", str(made_run), str(run_copy)])
    assert f"{run_copy / 'items.jsonl'}: " in line, line
    assert ("0 bytes, but the run wrote" if not legacy else "empty") in line
    assert "human pairs" not in line


@pytest.mark.parametrize("legacy", [False, True], ids=["listed", "legacy"])
def test_compare_names_a_missing_metrics_json_not_a_config_change(
    run_copy: Path, made_run: Path, capsys: pytest.CaptureFixture[str], legacy: bool
) -> None:
    """The run had human pairs, so it wrote metrics.json: its absence is the cause, where
    `compare` once read the missing provenance as a change of config."""
    if legacy:
        make_legacy(run_copy)
    (run_copy / "metrics.json").unlink()
    line = refusal(capsys, ["compare", str(made_run), str(run_copy), "--json"])
    assert f"{run_copy / 'metrics.json'}: missing" in line, line
    assert capsys.readouterr().out == ""


def test_an_old_run_scores_csv_cut_at_a_row_end_is_caught_by_its_row_count(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without files.json a cut that ends on a whole row keeps the file well formed; its rows
    are still one per items.jsonl line, and that count no longer holds."""
    make_legacy(run_copy)
    rows = (run_copy / "scores.csv").read_text().splitlines(keepends=True)
    (run_copy / "scores.csv").write_text("".join(rows[: len(rows) // 2]))
    line = refusal(capsys, ["audit", str(run_copy)])
    lines = len((run_copy / "items.jsonl").read_text().splitlines())
    assert f"scores.csv: {len(rows) // 2 - 1} rows, but summary.json counts {lines} results" in line


def test_an_old_run_dir_without_files_json_still_loads_and_reads(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_legacy(run_copy)
    record = titjudge.load_run(run_copy)
    assert record.files is None and record.variants and record.item_lines
    assert main(["audit", str(run_copy)]) == 0
    assert main(["metrics", str(run_copy), "--json"]) == 0
    assert "pairwise_accuracy" in capsys.readouterr().out


def test_the_record_holds_the_size_and_sha256_of_every_file_the_run_wrote(
    made_run: Path,
) -> None:
    record = titjudge.load_run(made_run)
    assert record.files is not None
    on_disk = {p.name for p in made_run.iterdir()} - {"files.json"}
    assert set(record.files.files) == on_disk >= {"items.jsonl", "scores.csv", "metrics.json"}
    for name, digest in record.files.files.items():
        data = (made_run / name).read_bytes()
        assert (digest.size, digest.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert "files" not in json.loads((made_run / "metrics.json").read_text())  # the record only


def test_the_run_returns_the_record_files_json_holds(synth_data: Path, tmp_path: Path) -> None:
    replay = builders.replay_describer(synth_data / "descriptions.jsonl")
    config = builders.run_config(synth_data, tmp_path, describer=replay, human_pairs=False)
    record = titjudge.evaluate(config)
    assert record.files is not None and "metrics.json" not in record.files.files
    assert titjudge.load_run(record.run_dir).files == record.files


def test_a_metrics_json_put_into_a_run_that_wrote_none_is_refused(
    synth_data: Path, made_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = builders.replay_describer(synth_data / "descriptions.jsonl")
    config = builders.run_config(synth_data, tmp_path, describer=replay, human_pairs=False)
    run = titjudge.evaluate(config).run_dir
    shutil.copy(made_run / "metrics.json", run / "metrics.json")
    line = refusal(capsys, ["metrics", str(run)])
    assert f"{run / 'metrics.json'}: not written by this run (files.json does not list it)" in line


def test_a_changed_files_json_is_named_as_itself(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """files.json cannot hold its own hash; it holds its listing's, so an edited entry is the
    list's fault, not the file's it names."""
    doc = json.loads((run_copy / "files.json").read_text())
    doc["files"]["scores.csv"]["size"] += 1
    (run_copy / "files.json").write_text(json.dumps(doc))
    line = refusal(capsys, ["audit", str(run_copy)])
    assert f"{run_copy / 'files.json'}: its entries do not match its own listing_sha256" in line


def test_an_export_into_the_run_dir_leaves_it_whole(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export`'s default folder is the run dir's frames/: files a reader never reads are
    not the run's, and nothing refuses them."""
    assert main(["export", str(run_copy), "--format", "csv"]) == 0
    assert (run_copy / "frames" / "items.csv").is_file()
    assert main(["audit", str(run_copy)]) == 0
    assert main(["runs", "verify", str(run_copy)]) == 0
    assert capsys.readouterr().err == ""
