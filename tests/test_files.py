"""The one atomic writer and the one JSONL reader (titjudge.files)."""

import errno
import os
import re
import stat
from pathlib import Path

import pytest
from pydantic import BaseModel

from titjudge.errors import ConfigError, DataError
from titjudge.files import (
    atomic_open,
    atomic_write,
    iter_jsonl,
    load_yaml,
    parse_record,
    parse_yaml,
    read_json_object,
    yaml_text,
)


@pytest.fixture
def umask():
    """Set a umask for one test; the old one comes back afterwards."""
    old = os.umask(0o022)
    try:
        yield lambda mask: os.umask(mask)
    finally:
        os.umask(old)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_written_files_honour_the_umask_like_open(tmp_path, umask, mask, expected):
    umask(mask)
    atomic_write(tmp_path / "a.txt", "text")
    atomic_write(tmp_path / "b.bin", b"\x00\x01")
    with (tmp_path / "plain.txt").open("w") as handle:
        handle.write("x")
    assert mode_of(tmp_path / "a.txt") == mode_of(tmp_path / "b.bin") == expected
    assert mode_of(tmp_path / "plain.txt") == expected


def test_text_and_bytes_land_as_given_and_folders_are_created(tmp_path):
    atomic_write(tmp_path / "deep" / "er" / "t.txt", "ä\r\nb\n")
    atomic_write(tmp_path / "b.bin", b"\xff\x00")
    assert (tmp_path / "deep" / "er" / "t.txt").read_bytes() == "ä\r\nb\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\xff\x00"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "scores.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="boom"), atomic_open(target) as handle:
        handle.write("half a new fi")
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.csv"]


def test_a_full_disk_is_one_clear_error_line(tmp_path, monkeypatch):
    target = tmp_path / "items.jsonl"
    target.write_text("old\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DataError) as caught:
        atomic_write(target, "new\n" * 1000)
    assert str(caught.value) == f"{target}: cannot write ({os.strerror(errno.ENOSPC)})"
    assert "\n" not in str(caught.value)
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl"]


def test_a_read_only_folder_is_a_data_error_too(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(DataError, match=re.escape(f"{folder / 'x.txt'}: cannot write")):
            atomic_write(folder / "x.txt", "x")
    finally:
        folder.chmod(0o700)


def test_jsonl_reader_skips_blank_lines_and_numbers_the_rest(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_text('{"a": 1}\n\n   \n{"a": 2}\n', encoding="utf-8")
    assert list(iter_jsonl(path, "test file")) == [(1, {"a": 1}), (4, {"a": 2})]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1}\n{"a": \n', ":2: invalid JSON (Expecting value at column 7)"),
        ('{"a": 1}\n\n[1, 2]\n', ":3: expected a JSON object, got list"),
        ("7\n", ":1: expected a JSON object, got int"),
    ],
)
def test_jsonl_reader_names_file_and_line(tmp_path, text, message):
    path = tmp_path / "f.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(f"{path}{message}")):
        list(iter_jsonl(path, "test file"))


def test_json_object_reader(tmp_path):
    good, bad, listed = tmp_path / "g.json", tmp_path / "b.json", tmp_path / "l.json"
    good.write_text('{"x": 1}')
    bad.write_text("{")
    listed.write_text("[]")
    assert read_json_object(good, "stats file") == {"x": 1}
    with pytest.raises(DataError, match=re.escape(f"{bad}: not valid JSON")):
        read_json_object(bad, "stats file")
    with pytest.raises(DataError, match=re.escape(f"{listed}: expected a JSON object")):
        read_json_object(listed, "stats file")
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 'no.json'}: stats file not found")):
        read_json_object(tmp_path / "no.json", "stats file")


class _Line(BaseModel):
    name: str
    count: int = 0


def test_parse_record_names_the_location_and_the_field():
    assert parse_record(_Line, {"name": "a", "count": 2}, "f:1") == _Line(name="a", count=2)
    with pytest.raises(DataError, match=r"^f:3: field 'count': Input should be a valid integer"):
        parse_record(_Line, {"name": "a", "count": "many"}, "f:3")
    with pytest.raises(DataError, match=r"^f:4: field 'name': Field required$"):
        parse_record(_Line, {}, "f:4")


def test_config_yaml_reads_and_writes_in_order_with_the_users_error_lines(tmp_path):
    doc = {"name": "größe", "judges": [{"name": "b", "weight": 0.5}, {"name": "a"}], "z": None}
    text = yaml_text(doc)
    assert text.index("name: größe") < text.index("judges:") < text.index("z: null")
    assert parse_yaml(text) == doc
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndescriber: {model: [\n")
    with pytest.raises(ConfigError) as raised:
        load_yaml(bad)
    # the line and the problem are the pure-Python parser's (libyaml says "did not find
    # expected node content"), whichever parser read the text first
    expected = f"{bad}:3: invalid YAML (expected the node content, but found '<stream end>')"
    assert str(raised.value) == expected


def test_a_jsonl_line_holding_a_line_separator_in_a_string_stays_one_line(tmp_path):
    """A rationale with U+2028, U+2029 or NEL (models do write them): `jsonl_text` keeps
    non-ASCII raw, so a reader splitting on `str.splitlines` cut the line in two."""
    from titjudge.files import iter_jsonl, jsonl_lines, jsonl_text

    rows = [{"rationale": "one\u2028two\u2029three\x85four"}, {"rationale": "next"}]
    path = tmp_path / "items.jsonl"
    path.write_text(jsonl_text(rows), encoding="utf-8")
    assert [obj for _, obj in iter_jsonl(path, "items")] == rows
    assert len([x for x in jsonl_lines(path.read_text(encoding="utf-8")) if x]) == 2
    path.write_text(jsonl_text(rows).replace("\n", "\r\n"), encoding="utf-8")  # Windows
    assert [obj for _, obj in iter_jsonl(path, "items")] == rows
