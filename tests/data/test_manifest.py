"""Manifest loading/writing and the image check; every error names file and line."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from PIL import Image

from titjudge.data.manifest import check_images, load_manifest, write_manifest
from titjudge.errors import DataError
from titjudge.records.items import Item


def line(item_id: str = "i1", **over: object) -> str:
    record: dict[str, object] = {
        "item_id": item_id,
        "prompt_id": "p1",
        "prompt": "a red cat",
        "image": f"img/{item_id}.png",
        "t2i_model": "m",
    }
    record.update(over)
    return json.dumps({k: v for k, v in record.items() if v is not ...})


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "manifest.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_loads_items_with_absolute_image_paths(tmp_path: Path) -> None:
    path = write(tmp_path, line("i1"), "", line("i2", image="../elsewhere/x.png"))
    items = load_manifest(path)
    assert [i.item_id for i in items] == ["i1", "i2"]
    assert items[0].image == tmp_path / "img" / "i1.png"
    assert items[1].image == tmp_path.parent / "elsewhere" / "x.png"
    assert items[0].image.is_absolute()
    assert (items[0].prompt_id, items[0].prompt, items[0].t2i_model) == ("p1", "a red cat", "m")


def test_write_then_load_round_trips_with_relative_paths(tmp_path: Path) -> None:
    items = [
        Item("a", "p1", "prompt ü", tmp_path / "data" / "images" / "a.png", "m1"),
        Item("b", "p1", "prompt ü", Path("/abs/b.png"), "m2"),
    ]
    out = tmp_path / "data" / "manifest.jsonl"
    write_manifest(items, out)
    records = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["image"] for r in records] == ["images/a.png", "/abs/b.png"]
    assert list(records[0]) == ["item_id", "prompt_id", "prompt", "image", "t2i_model"]
    assert load_manifest(out) == items


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(
        DataError, match=re.escape(f"{tmp_path / 'nope.jsonl'}: manifest not found")
    ):
        load_manifest(tmp_path / "nope.jsonl")


def test_corrupt_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, line("i1"), '{"item_id": "i2", ')
    with pytest.raises(DataError, match=re.escape(f"{path}:2: invalid JSON")):
        load_manifest(path)


def test_line_without_prompt(tmp_path: Path) -> None:
    path = write(tmp_path, line("i1"), "", line("i2", prompt=...))
    with pytest.raises(DataError, match=re.escape(f"{path}:3: missing field 'prompt'")):
        load_manifest(path)


def test_empty_prompt(tmp_path: Path) -> None:
    path = write(tmp_path, line("i1", prompt="  "))
    with pytest.raises(DataError, match=re.escape(f"{path}:1: field 'prompt' is empty")):
        load_manifest(path)


def test_duplicate_item_id(tmp_path: Path) -> None:
    path = write(tmp_path, line("i1"), line("i2"), line("i1"))
    with pytest.raises(
        DataError, match=re.escape(f"{path}:3: duplicate item_id 'i1' (first at line 1)")
    ):
        load_manifest(path)


@pytest.mark.parametrize("field", ["item_id", "prompt_id"])
def test_non_string_ids(tmp_path: Path, field: str) -> None:
    record = json.loads(line("i1"))
    record[field] = 7
    path = write(tmp_path, json.dumps(record))
    with pytest.raises(
        DataError, match=re.escape(f"{path}:1: field '{field}' must be a string, got int 7")
    ):
        load_manifest(path)


def test_non_object_line(tmp_path: Path) -> None:
    path = write(tmp_path, "[1, 2]")
    with pytest.raises(DataError, match=re.escape(f"{path}:1: expected a JSON object, got list")):
        load_manifest(path)


def test_empty_manifest(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    with pytest.raises(DataError, match="manifest has no items"):
        load_manifest(path)


def test_write_refuses_duplicate_ids(tmp_path: Path) -> None:
    item = Item("a", "p", "x", tmp_path / "a.png", "m")
    with pytest.raises(DataError, match="duplicate item_id 'a'"):
        write_manifest([item, item], tmp_path / "m.jsonl")


def test_check_images_lists_missing_and_unreadable(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    Image.new("RGB", (8, 8), (255, 0, 0)).save(tmp_path / "img" / "ok.png")
    (tmp_path / "img" / "bad.png").write_bytes(b"not a png at all")
    path = write(tmp_path, line("ok"), line("bad"), line("gone"))
    problems = check_images(load_manifest(path))
    assert len(problems) == 2
    assert problems[0].startswith("bad: image unreadable")
    assert problems[1] == f"gone: image not found: {tmp_path / 'img' / 'gone.png'}"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
def test_check_images_names_a_fifo_without_opening_it(tmp_path: Path) -> None:
    """`titjudge annotate`'s image check opened each image with Pillow: a FIFO blocked it."""
    (tmp_path / "img").mkdir()
    os.mkfifo(tmp_path / "img" / "pipe.png")
    problems = check_images(load_manifest(write(tmp_path, line("pipe"))))
    assert problems == [
        f"pipe: image is a FIFO (named pipe), not a regular file: {tmp_path / 'img' / 'pipe.png'}"
    ]
