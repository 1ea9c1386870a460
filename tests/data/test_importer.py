"""Folder import: the three layouts, mapping files, ambiguity and missing images."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from titjudge.data.importer import LAYOUT_A, LAYOUT_B, LAYOUT_C, LAYOUT_MAPPING, import_folder
from titjudge.errors import DataError

PROMPTS = {"p1": "a red cat on a mat", "p2": "two blue birds", "p3": "a lighthouse at dusk"}


def png(path: Path, colour: tuple[int, int, int] = (200, 10, 10)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), colour).save(path)
    return path


def prompt_file(root: Path, kind: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    if kind == "jsonl":
        lines = [json.dumps({"prompt_id": k, "prompt": v}) for k, v in PROMPTS.items()]
        (root / "prompts.jsonl").write_text("\n".join(lines) + "\n")
    elif kind == "csv":
        rows = "".join(f'{k},"{v}"\n' for k, v in PROMPTS.items())
        (root / "prompts.csv").write_text("prompt_id,prompt\n" + rows)
    elif kind == "json-list":
        (root / "prompts.json").write_text(
            json.dumps([{"prompt_id": k, "prompt": v} for k, v in PROMPTS.items()])
        )
    else:
        (root / "prompts.json").write_text(json.dumps(PROMPTS))


def layout_a(root: Path, kind: str = "jsonl") -> Path:
    prompt_file(root, kind)
    for model in ("m1", "m2"):
        for pid in PROMPTS:
            if (model, pid) != ("m2", "p3"):  # one image missing
                png(root / "images" / model / f"{pid}.png")
    (root / "images" / "m1" / "notes.txt").write_text("ignored")
    return root


@pytest.mark.parametrize("kind", ["jsonl", "csv", "json-list", "json-dict"])
def test_layout_a_prompt_file_and_image_folders(tmp_path: Path, kind: str) -> None:
    result = import_folder(layout_a(tmp_path / "ds", kind))
    assert result.layout == LAYOUT_A
    assert [i.item_id for i in result.items] == ["p1__m1", "p1__m2", "p2__m1", "p2__m2", "p3__m1"]
    assert (result.n_prompts, result.n_models, result.n_images) == (3, 2, 5)
    assert result.missing == ["images/m2/p3.*"]
    first = result.items[0]
    assert (first.prompt, first.t2i_model) == ("a red cat on a mat", "m1")
    assert first.image == (tmp_path / "ds" / "images" / "m1" / "p1.png")


def test_layout_b_prompt_folders(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    for pid, text in PROMPTS.items():
        (root / pid).mkdir(parents=True)
        (root / pid / "prompt.txt").write_text(text + "\n")
        png(root / pid / "flux.png")
        if pid != "p2":
            png(root / pid / "sd3.jpg")
    result = import_folder(root)
    assert result.layout == LAYOUT_B
    assert [i.item_id for i in result.items] == [
        "p1__flux",
        "p1__sd3",
        "p2__flux",
        "p3__flux",
        "p3__sd3",
    ]
    assert result.models == ["flux", "sd3"]
    assert result.missing == ["p2/sd3.*"]
    assert result.items[0].prompt == "a red cat on a mat"


def layout_c(root: Path) -> Path:
    """prompts/<id>.txt + images/<model>/<id>.<ext>; m2 lacks p3, p2's m1 image is a .JPG."""
    (root / "prompts").mkdir(parents=True)
    for pid, text in PROMPTS.items():
        (root / "prompts" / f"{pid}.txt").write_text(f"  {text}\n")
    (root / "prompts" / "README.md").write_text("not a prompt")
    for model in ("m1", "m2"):
        for pid in PROMPTS:
            if (model, pid) != ("m2", "p3"):
                ext = (
                    ".JPG" if (model, pid) == ("m1", "p2") else ".webp" if model == "m2" else ".png"
                )
                png(root / "images" / model / f"{pid}{ext}")
    return root


def test_layout_c_prompt_texts_and_image_folders(tmp_path: Path) -> None:
    root = layout_c(tmp_path / "ds")
    result = import_folder(root)
    assert result.layout == LAYOUT_C
    assert [(i.item_id, i.prompt_id, i.t2i_model) for i in result.items] == [
        ("p1__m1", "p1", "m1"),
        ("p1__m2", "p1", "m2"),
        ("p2__m1", "p2", "m1"),
        ("p2__m2", "p2", "m2"),
        ("p3__m1", "p3", "m1"),
    ]
    assert [i.prompt for i in result.items[::2]] == list(PROMPTS.values())
    assert result.items[2].image == root / "images" / "m1" / "p2.JPG"
    assert result.items[1].image == root / "images" / "m2" / "p1.webp"
    assert result.missing == ["images/m2/p3.*"]


def test_layout_c_image_without_prompt_and_empty_prompt(tmp_path: Path) -> None:
    root = layout_c(tmp_path / "ds")
    stray = png(root / "images" / "m1" / "p4.png")
    with pytest.raises(
        DataError, match=re.escape(f"{stray}: image for unknown prompt 'p4' (not in prompts/)")
    ):
        import_folder(root)
    stray.unlink()
    (root / "prompts" / "p1.txt").write_text(" \n")
    with pytest.raises(
        DataError, match=re.escape(f"{root / 'prompts' / 'p1.txt'}: prompt is empty")
    ):
        import_folder(root)


def test_layout_c_needs_images_and_is_exclusive(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "p1.txt").write_text("a cat")
    with pytest.raises(DataError, match="found prompts/ but no images/ folder"):
        import_folder(root)
    prompt_file(root, "jsonl")
    with pytest.raises(
        DataError, match=r"ambiguous layout: both prompts.jsonl \(layout A\) and prompts/ with"
    ):
        import_folder(root)


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_mapping_file(tmp_path: Path, suffix: str) -> None:
    root = tmp_path / "ds"
    png(root / "x" / "one.png")
    png(root / "x" / "two.png")
    rows = [
        {
            "prompt_id": "p1",
            "prompt": "a cat",
            "image": "x/one.png",
            "t2i_model": "m1",
            "item_id": "custom",
        },
        {
            "prompt_id": "p1",
            "prompt": "a cat",
            "image": "x/two.png",
            "t2i_model": "m2",
            "item_id": "",
        },
        {
            "prompt_id": "p2",
            "prompt": "a dog",
            "image": "x/gone.png",
            "t2i_model": "m1",
            "item_id": "",
        },
    ]
    mapping = tmp_path / f"map.{suffix}"
    if suffix == "csv":
        mapping.write_text(
            "prompt_id,prompt,image,t2i_model,item_id\n"
            + "".join(",".join(r.values()) + "\n" for r in rows)
        )
    else:
        rows[1].pop("item_id")
        rows[2].pop("item_id")
        mapping.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = import_folder(root, mapping)
    assert result.layout == LAYOUT_MAPPING
    assert [(i.item_id, i.prompt_id, i.t2i_model) for i in result.items] == [
        ("custom", "p1", "m1"),
        ("p1__m2", "p1", "m2"),
    ]
    assert result.items[1].image == root / "x" / "two.png"
    assert result.missing == [f"{mapping}:{4 if suffix == 'csv' else 3}: x/gone.png"]
    assert (result.n_prompts, result.n_models) == (2, 2)


def test_mapping_with_inconsistent_prompt_text(tmp_path: Path) -> None:
    mapping = tmp_path / "map.csv"
    mapping.write_text("prompt_id,prompt,image,t2i_model\np1,a cat,a.png,m1\np1,a dog,b.png,m2\n")
    with pytest.raises(
        DataError,
        match=re.escape(f"{mapping}:3: prompt 'p1' has a different text than at {mapping}:2"),
    ):
        import_folder(tmp_path, mapping)


def test_both_layouts_are_ambiguous(tmp_path: Path) -> None:
    root = layout_a(tmp_path / "ds")
    (root / "p9").mkdir()
    (root / "p9" / "prompt.txt").write_text("x")
    with pytest.raises(
        DataError, match="ambiguous layout: both prompts.jsonl .* and prompt folders"
    ):
        import_folder(root)


def test_two_prompt_files_are_ambiguous(tmp_path: Path) -> None:
    root = layout_a(tmp_path / "ds")
    prompt_file(root, "csv")
    with pytest.raises(DataError, match=r"several prompt files \(prompts.jsonl, prompts.csv\)"):
        import_folder(root)


def test_undetectable_layout_asks_for_mapping(tmp_path: Path) -> None:
    png(tmp_path / "ds" / "a.png")
    with pytest.raises(DataError, match="cannot detect the layout.*--mapping"):
        import_folder(tmp_path / "ds")


def test_duplicate_prompt_ids(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    path = root / "prompts.jsonl"
    path.write_text('{"prompt_id": "p1", "prompt": "x"}\n{"prompt_id": "p1", "prompt": "y"}\n')
    with pytest.raises(
        DataError, match=re.escape(f"{path}:2: duplicate prompt_id 'p1' (first at {path}:1)")
    ):
        import_folder(root)


def test_image_of_unknown_prompt(tmp_path: Path) -> None:
    root = layout_a(tmp_path / "ds")
    stray = png(root / "images" / "m1" / "p4.png")
    with pytest.raises(DataError, match=re.escape(f"{stray}: image for unknown prompt 'p4'")):
        import_folder(root)


def test_two_images_for_one_slot(tmp_path: Path) -> None:
    root = layout_a(tmp_path / "ds")
    png(root / "images" / "m1" / "p1.jpg")
    with pytest.raises(DataError, match="two images for prompt 'p1' of model 'm1'"):
        import_folder(root)


def test_layout_b_folder_without_prompt(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    (root / "p1").mkdir(parents=True)
    (root / "p1" / "prompt.txt").write_text("x")
    png(root / "p2" / "m.png")
    with pytest.raises(
        DataError, match=re.escape(f"{root / 'p2'}: folder holds images but no prompt.txt")
    ):
        import_folder(root)


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="folder not found"):
        import_folder(tmp_path / "none")
