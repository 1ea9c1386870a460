"""files.json (`report.run_files`, `records.run_files`): what it lists, how it proves itself,
what `check_run` finds in a dir laid out by hand, and what a run dir from before files.json
can still be checked for."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from titjudge.errors import DataError
from titjudge.records.run_files import RunFiles
from titjudge.report.run_files import check_run, legacy_problems, load_run_files, write_run_files


def laid_out(folder: Path) -> Path:
    """A run dir's files, a nested file, and a nested dir with a files.json of its own."""
    (folder / "sub").mkdir(parents=True)
    (folder / "items.jsonl").write_text('{"a": 1}\n')
    (folder / "scores.csv").write_text("item_id,variant,score,status\n")
    (folder / "pairs_pw.jsonl").write_text('{"b": 2}\n')
    (folder / "sub" / "plot.png").write_bytes(b"\x89PNG\x00")
    (folder / "rows" / "r1").mkdir(parents=True)
    (folder / "rows" / "r1" / "items.jsonl").write_text("{}\n")
    write_run_files(folder / "rows" / "r1")
    return folder


def problems(run: Path, **options: object) -> list[str]:
    return [p.line() for p in check_run(run, load_run_files(run), **options)]  # type: ignore[arg-type]


def test_every_file_is_listed_with_its_size_and_sha256_but_itself_and_nested_runs(
    tmp_path: Path,
) -> None:
    run = laid_out(tmp_path / "run")
    listing = write_run_files(run)
    assert list(listing.files) == ["items.jsonl", "pairs_pw.jsonl", "scores.csv", "sub/plot.png"]
    for name, digest in listing.files.items():
        data = (run / name).read_bytes()
        assert digest.size == len(data) and digest.sha256 == hashlib.sha256(data).hexdigest()
    assert load_run_files(run) == listing
    assert RunFiles.model_validate_json((run / "files.json").read_text()).proves_itself
    assert problems(run) == []


def test_a_listing_changed_by_hand_is_the_listings_fault(tmp_path: Path) -> None:
    run = laid_out(tmp_path / "run")
    write_run_files(run)
    doc = json.loads((run / "files.json").read_text())
    doc["files"]["items.jsonl"]["sha256"] = "0" * 64
    (run / "files.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match=r"files\.json: its entries do not match its own"):
        load_run_files(run)


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ('{"format": 2, "files": {}}', "file list format 2 is not one this titjudge reads"),
        ('{"format": 1, "files": {}, "extra": 1}', "not a run's file list (extra"),
        ('{"files": {"a": {"size": 1, "sha256": "xyz"}}}', "not a run's file list (files.a.sha256"),
        ('{"files": ', "not valid JSON"),
        (
            '{"files": {"../x": {"size": 1, "sha256": "%s"}}}' % ("0" * 64),
            "it names '../x', outside the run",
        ),
    ],
    ids=["newer", "unknown-key", "bad-digest", "cut", "outside"],
)
def test_a_bad_files_json_is_one_line_naming_it(tmp_path: Path, doc: str, says: str) -> None:
    (tmp_path / "files.json").write_text(doc)
    with pytest.raises(DataError, match="files.json: ") as raised:
        load_run_files(tmp_path)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_check_finds_missing_replaced_and_unlisted_read_files_not_other_extras(
    tmp_path: Path,
) -> None:
    run = laid_out(tmp_path / "run")
    write_run_files(run)
    (run / "pairs_pw.jsonl").unlink()
    (run / "scores.csv").unlink()
    (run / "scores.csv").mkdir()
    (run / "metrics.json").write_text("{}")  # read by every reader, not the run's
    (run / "pairs_new.jsonl").write_text("{}\n")
    (run / "frames").mkdir()  # `export`'s, read by no reader
    (run / "frames" / "items.csv").write_text("a\n")
    (run / "audit.html").write_text("<html>")
    assert problems(run) == [
        f"{run / 'pairs_pw.jsonl'}: missing; the run wrote it (9 bytes, files.json)",
        f"{run / 'scores.csv'}: not a file; the run wrote a file here (files.json)",
        f"{run / 'metrics.json'}: not written by this run (files.json does not list it)",
        f"{run / 'pairs_new.jsonl'}: not written by this run (files.json does not list it)",
    ]


def test_hash_only_hashes_the_named_files_and_sizes_the_rest(tmp_path: Path) -> None:
    run = laid_out(tmp_path / "run")
    write_run_files(run)
    (run / "items.jsonl").write_text('{"a": 2}\n')  # same size
    (run / "pairs_pw.jsonl").write_text('{"b": 3}\n')
    assert problems(run, hash_only=("pairs_pw.jsonl",)) == [
        f"{run / 'pairs_pw.jsonl'}: changed since the run wrote it (same size, another "
        "sha256 than files.json's)"
    ]
    assert len(problems(run)) == 2


def legacy_run(folder: Path, lines: int, rows: int, counted: int | None) -> Path:
    folder.mkdir()
    (folder / "items.jsonl").write_text("".join(f'{{"n": {i}}}\n' for i in range(lines)))
    (folder / "scores.csv").write_text(
        "item_id,variant,score,status\n" + "".join(f"i{i},v,1.0,ok\n" for i in range(rows))
    )
    if counted is not None:
        summary = {"variants": {"v": {"ok": counted}}}
        (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_an_old_run_whose_files_agree_has_no_problem(tmp_path: Path) -> None:
    assert legacy_problems(legacy_run(tmp_path / "r", 3, 3, 3)) == []
    assert legacy_problems(legacy_run(tmp_path / "s", 3, 3, None)) == []
    (tmp_path / "grid").mkdir()  # a grid's own dir: nothing of a run in it
    assert legacy_problems(tmp_path / "grid") == []


@pytest.mark.parametrize(
    ("lines", "rows", "counted", "says"),
    [
        (3, 2, None, "scores.csv: 2 rows, but items.jsonl has 3 lines (one row each)"),
        (3, 2, 3, "scores.csv: 2 rows, but summary.json counts 3 results (one row each)"),
        (2, 3, 3, "items.jsonl: 2 lines, but summary.json counts 3 (item, variant) results"),
    ],
)
def test_an_old_run_whose_counts_disagree_names_the_short_file(
    tmp_path: Path, lines: int, rows: int, counted: int | None, says: str
) -> None:
    run = legacy_run(tmp_path / "r", lines, rows, counted)
    assert [p.line() for p in legacy_problems(run)] == [f"{run}/{says}"]


def test_an_old_run_names_a_cut_pairs_file_and_a_bad_summary(tmp_path: Path) -> None:
    run = legacy_run(tmp_path / "r", 2, 2, 2)
    (run / "pairs_pw.jsonl").write_text('{"a": 1}\n{"b": ')
    (run / "summary.json").write_text('{"items": "many"}')
    found = [p.line() for p in legacy_problems(run)]
    assert found[0] == f"{run / 'pairs_pw.jsonl'}: cut: line 2 is not a whole JSON line"
    assert found[1].startswith(f"{run / 'summary.json'}: not a run summary: field 'items':")
