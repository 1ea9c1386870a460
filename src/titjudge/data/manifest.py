"""The manifest: one JSONL line per generated image (`item_id, prompt_id, prompt, image, t2i_model`).

`image` is stored relative to the manifest's folder so a dataset folder can be moved
as a whole; loading resolves it to an absolute path. Loading never opens images:
a missing image is a per-item failure at run time, and `check_images` lists them up
front for commands that want to warn early.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from titjudge.errors import DataError, where
from titjudge.files import atomic_write, iter_jsonl
from titjudge.records.items import Item
from titjudge.user_files import read_user_file

MANIFEST_FIELDS: tuple[str, ...] = ("item_id", "prompt_id", "prompt", "image", "t2i_model")


def require_str(obj: dict[str, Any], key: str, loc: str) -> str:
    """The non-empty string at `key`, or a DataError naming the field and location."""
    if key not in obj or obj[key] is None:
        raise DataError(f"{loc}: missing field '{key}'")
    value = obj[key]
    if not isinstance(value, str):
        raise DataError(
            f"{loc}: field '{key}' must be a string, got {type(value).__name__} {value!r}"
        )
    if not value.strip():
        raise DataError(f"{loc}: field '{key}' is empty")
    return value


def load_manifest(path: Path) -> list[Item]:
    """Load and validate a manifest; every problem is a DataError naming `file:line`."""
    path = Path(path)
    base = Path(os.path.abspath(path.parent))
    items: list[Item] = []
    first_line: dict[str, int] = {}
    for number, obj in iter_jsonl(path, "manifest"):
        loc = where(path, number)
        fields = {key: require_str(obj, key, loc) for key in MANIFEST_FIELDS}
        item_id = fields["item_id"]
        if item_id in first_line:
            raise DataError(
                f"{loc}: duplicate item_id {item_id!r} (first at line {first_line[item_id]})"
            )
        first_line[item_id] = number
        image = Path(os.path.abspath(base / fields["image"]))
        items.append(
            Item(item_id, fields["prompt_id"], fields["prompt"], image, fields["t2i_model"])
        )
    if not items:
        raise DataError(f"{path}: manifest has no items")
    return items


def check_images(items: Iterable[Item]) -> list[str]:
    """One message per item whose image is missing or cannot be decoded, in input order."""
    from PIL import Image, UnidentifiedImageError

    problems: list[str] = []
    for item in items:
        try:  # only a regular file is opened, and read within its bound (`user_files`)
            data = read_user_file(item.image, "image")
        except DataError as exc:
            why = str(exc).removeprefix(f"{item.image}: ")
            state = "not found" if why == "image file not found" else why.removeprefix("image ")
            problems.append(f"{item.item_id}: image {state}: {item.image}")
            continue
        try:
            with Image.open(io.BytesIO(data)) as image:
                image.verify()
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
            problems.append(f"{item.item_id}: image unreadable ({exc}): {item.image}")
    return problems


def relative_image_path(image: Path, folder: Path) -> str:
    """`image` relative to `folder` when it lies inside it, else absolute (POSIX separators)."""
    image_abs = Path(os.path.abspath(image))
    folder_abs = Path(os.path.abspath(folder))
    try:
        return image_abs.relative_to(folder_abs).as_posix()
    except ValueError:
        return image_abs.as_posix()


def manifest_line(item: Item, folder: Path) -> str:
    """One manifest line for `item`, its image path relative to `folder` when possible."""
    record = {
        "item_id": item.item_id,
        "prompt_id": item.prompt_id,
        "prompt": item.prompt,
        "image": relative_image_path(item.image, folder),
        "t2i_model": item.t2i_model,
    }
    return json.dumps(record, ensure_ascii=False)


def write_manifest(items: Iterable[Item], path: Path) -> None:
    """Write items as JSONL; refuses duplicate ids so the file always loads back."""
    path = Path(path)
    seen: set[str] = set()
    lines: list[str] = []
    for item in items:
        if item.item_id in seen:
            raise DataError(f"{path}: refusing to write duplicate item_id {item.item_id!r}")
        seen.add(item.item_id)
        lines.append(manifest_line(item, path.parent))
    atomic_write(path, "".join(line + "\n" for line in lines))
