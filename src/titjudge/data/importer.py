"""Turn a folder of prompts and generated images into manifest items.

Three layouts are detected; anything else needs an explicit mapping file:

- (A) prompt file: `prompts.jsonl` | `prompts.csv` | `prompts.json` (prompt_id + prompt)
  beside `images/<model>/<prompt_id>.<ext>`;
- (B) prompt folders: `<prompt_id>/prompt.txt` beside `<prompt_id>/<model>.<ext>`;
- (C) prompt texts: `prompts/<prompt_id>.txt` (one prompt per file, id from the file
  name) beside `images/<model>/<prompt_id>.<ext>`;
- mapping (`--mapping`, CSV or JSONL): prompt_id, prompt, image, t2i_model[, item_id],
  `image` absolute or relative to the imported folder.

Item ids default to `<prompt_id>__<model>`. A (prompt, model) combination without an
image, or a mapped image that does not exist, is reported in `missing` and left out
of `items`, so the manifest only names files that exist. Anything ambiguous (both
layouts, two prompt files, duplicate prompt ids, two images for one slot, an image of
an unknown prompt) is a DataError rather than a guess. Image extensions (any case):
png, jpg, jpeg, webp, bmp, gif, tif, tiff; hidden files are ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.data.manifest import require_str
from titjudge.data.pairs import iter_csv
from titjudge.errors import DataError, did_you_mean, where
from titjudge.files import iter_jsonl, read_text
from titjudge.records.items import Item

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff"})
PROMPT_FILES = ("prompts.jsonl", "prompts.csv", "prompts.json")
MAPPING_FIELDS = ("prompt_id", "prompt", "image", "t2i_model")
PROMPT_TEXTS_DIR = "prompts"
LAYOUT_A, LAYOUT_B, LAYOUT_C = "prompt-file", "prompt-folders", "prompt-texts"
LAYOUT_MAPPING = "mapping"


@dataclass
class ImportResult:
    """Items found (images that exist), plus what a user needs to check the import."""

    items: list[Item]
    layout: str
    prompts: list[str]
    models: list[str]
    missing: list[str] = field(default_factory=list)

    @property
    def n_prompts(self) -> int:
        return len(self.prompts)

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_images(self) -> int:
        return len(self.items)


def default_item_id(prompt_id: str, model: str) -> str:
    return f"{prompt_id}__{model}"


def is_image(path: Path) -> bool:
    return (
        path.is_file() and path.suffix.lower() in IMAGE_EXTENSIONS and not path.name.startswith(".")
    )


def _prompt_id(value: Any, loc: str) -> str:
    """Prompt ids are strings; whole numbers (common in JSON exports) are accepted as text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{loc}: prompt_id must be a non-empty string, got {value!r}")
    return value.strip()


def _add_prompt(
    prompts: dict[str, str], lines: dict[str, str], pid: str, text: str, loc: str
) -> None:
    if pid in prompts:
        raise DataError(f"{loc}: duplicate prompt_id {pid!r} (first at {lines[pid]})")
    prompts[pid], lines[pid] = text, loc


def load_prompt_file(path: Path) -> dict[str, str]:
    """prompt_id -> prompt from a .jsonl, .csv or .json prompt file, in file order."""
    prompts: dict[str, str] = {}
    lines: dict[str, str] = {}
    if path.suffix == ".jsonl":
        for number, obj in iter_jsonl(path, "prompt file"):
            loc = where(path, number)
            _add_prompt(
                prompts,
                lines,
                _prompt_id(obj.get("prompt_id"), loc),
                require_str(obj, "prompt", loc),
                loc,
            )
    elif path.suffix == ".csv":
        for number, row in iter_csv(path, ("prompt_id", "prompt"), "prompt file"):
            loc = where(path, number)
            if not row["prompt"]:
                raise DataError(f"{loc}: field 'prompt' is empty")
            _add_prompt(prompts, lines, _prompt_id(row["prompt_id"], loc), row["prompt"], loc)
    else:
        for loc, pid, text in _json_prompts(path):
            _add_prompt(prompts, lines, pid, text, loc)
    if not prompts:
        raise DataError(f"{path}: prompt file has no prompts")
    return prompts


def _json_prompts(path: Path) -> Iterator[tuple[str, str, str]]:
    """(location, prompt_id, prompt) from a JSON list of objects or an {id: prompt} object."""

    def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        dupes = sorted({key for key in keys if keys.count(key) > 1})
        if dupes:
            raise DataError(f"{path}: duplicate prompt_id/key {dupes[0]!r}")
        return dict(pairs)

    try:
        data = json.loads(read_text(path, "prompt file"), object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where(path, exc.lineno)}: invalid JSON ({exc.msg})") from None
    if isinstance(data, dict):
        for pid, text in data.items():
            loc = f"{path}: key {pid!r}"
            if not isinstance(text, str) or not text.strip():
                raise DataError(f"{loc}: prompt must be a non-empty string")
            yield loc, _prompt_id(pid, loc), text
    elif isinstance(data, list):
        for index, obj in enumerate(data):
            loc = f"{path}: entry {index}"
            if not isinstance(obj, dict):
                raise DataError(f"{loc}: expected an object with prompt_id and prompt")
            yield loc, _prompt_id(obj.get("prompt_id"), loc), require_str(obj, "prompt", loc)
    else:
        raise DataError(
            f"{path}: expected a list of {{prompt_id, prompt}} objects or an {{id: prompt}} object"
        )


def _slot(found: dict[tuple[str, str], Path], key: tuple[str, str], image: Path) -> None:
    if key in found:
        raise DataError(
            f"{image}: two images for prompt {key[0]!r} of model {key[1]!r} ({found[key].name}, {image.name})"
        )
    found[key] = image


def _grid(
    layout: str, prompts: dict[str, str], found: dict[tuple[str, str], Path], models: list[str]
) -> ImportResult:
    """Items for every (prompt, model) with an image; the rest reported missing."""
    items: list[Item] = []
    missing: list[str] = []
    for pid, text in prompts.items():
        for model in models:
            image = found.get((pid, model))
            if image is None:
                missing.append(
                    f"{pid}/{model}.*" if layout == LAYOUT_B else f"images/{model}/{pid}.*"
                )
            else:
                items.append(Item(default_item_id(pid, model), pid, text, image, model))
    return _finish(ImportResult(items, layout, list(prompts), models, missing))


def load_prompt_texts(folder: Path) -> dict[str, str]:
    """prompt_id -> prompt from `<prompt_id>.txt` files in `folder`, sorted by file name."""
    prompts: dict[str, str] = {}
    lines: dict[str, str] = {}
    for path in text_files(folder):
        text = read_text(path, "prompt file").strip()
        if not text:
            raise DataError(f"{path}: prompt is empty")
        _add_prompt(prompts, lines, path.stem, text, str(path))
    return prompts


def text_files(folder: Path) -> list[Path]:
    """The visible `.txt` files directly in `folder` (any case of the extension)."""
    return [
        p
        for p in sorted(folder.iterdir())
        if p.is_file() and p.suffix.lower() == ".txt" and not p.name.startswith(".")
    ]


def _import_image_folders(
    root: Path, layout: str, prompts: dict[str, str], source: str
) -> ImportResult:
    """Layouts A and C: `images/<model>/<prompt_id>.<ext>` for prompts read from `source`."""
    images_dir = root / "images"
    if not images_dir.is_dir():
        raise DataError(
            f"{root}: found {source} but no images/ folder (expected images/<model>/<prompt_id>.png)"
        )
    found: dict[tuple[str, str], Path] = {}
    models: list[str] = []
    for entry in sorted(images_dir.iterdir()):
        if is_image(entry):
            raise DataError(
                f"{entry}: image directly in images/; put it in images/<model>/ so its model is known"
            )
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        models.append(entry.name)
        for image in sorted(entry.iterdir()):
            if not is_image(image):
                continue
            if image.stem not in prompts:
                raise DataError(
                    f"{image}: image for unknown prompt {image.stem!r} (not in {source})"
                    f"{did_you_mean(image.stem, prompts)}"
                )
            _slot(found, (image.stem, entry.name), Path(os.path.abspath(image)))
    if not models:
        raise DataError(f"{images_dir}: no model folders (expected images/<model>/<prompt_id>.png)")
    return _grid(layout, prompts, found, models)


def _import_prompt_folders(root: Path, folders: list[Path]) -> ImportResult:
    prompts: dict[str, str] = {}
    found: dict[tuple[str, str], Path] = {}
    models: set[str] = set()
    for folder in folders:
        text = read_text(folder / "prompt.txt", "prompt file").strip()
        if not text:
            raise DataError(f"{folder / 'prompt.txt'}: prompt is empty")
        prompts[folder.name] = text
        for image in sorted(folder.iterdir()):
            if is_image(image):
                models.add(image.stem)
                _slot(found, (folder.name, image.stem), Path(os.path.abspath(image)))
    return _grid(LAYOUT_B, prompts, found, sorted(models))


def _mapping_rows(mapping: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    suffix = mapping.suffix.lower()
    if suffix == ".csv":
        for number, row in iter_csv(mapping, MAPPING_FIELDS, "mapping file"):
            yield where(mapping, number), {k: v for k, v in row.items() if v != ""}
    elif suffix in (".jsonl", ".ndjson"):
        for number, obj in iter_jsonl(mapping, "mapping file"):
            yield where(mapping, number), obj
    else:
        raise DataError(
            f"{mapping}: mapping file must be .csv or .jsonl, got {mapping.suffix or 'no extension'!r}"
        )


def _import_mapping(root: Path, mapping: Path) -> ImportResult:
    prompts: dict[str, str] = {}
    prompt_loc: dict[str, str] = {}
    items: list[Item] = []
    missing: list[str] = []
    models: list[str] = []
    for loc, row in _mapping_rows(mapping):
        pid = _prompt_id(row.get("prompt_id"), loc)
        text, image_text, model = (
            require_str(row, key, loc) for key in ("prompt", "image", "t2i_model")
        )
        if pid in prompts and prompts[pid] != text:
            raise DataError(f"{loc}: prompt {pid!r} has a different text than at {prompt_loc[pid]}")
        prompts.setdefault(pid, text)
        prompt_loc.setdefault(pid, loc)
        if model not in models:
            models.append(model)
        item_id = (
            require_str(row, "item_id", loc) if "item_id" in row else default_item_id(pid, model)
        )
        image = Path(os.path.abspath(root / Path(image_text).expanduser()))
        if not image.is_file():
            missing.append(f"{loc}: {image_text}")
            continue
        items.append(Item(item_id, pid, text, image, model))
    if not prompts:
        raise DataError(f"{mapping}: mapping file has no rows")
    return _finish(ImportResult(items, LAYOUT_MAPPING, list(prompts), models, missing), mapping)


def _finish(result: ImportResult, source: Path | None = None) -> ImportResult:
    seen: set[str] = set()
    for item in result.items:
        if item.item_id in seen:
            raise DataError(f"{source or item.image}: duplicate item_id {item.item_id!r}")
        seen.add(item.item_id)
    return result


def detect_layout(root: Path) -> tuple[str, Path | list[Path]]:
    """Which layout `root` uses: (LAYOUT_A, prompt file), (LAYOUT_C, prompts folder) or
    (LAYOUT_B, prompt folders); more than one of them is ambiguous."""
    prompt_files = [root / name for name in PROMPT_FILES if (root / name).is_file()]
    texts_dir = root / PROMPT_TEXTS_DIR
    has_texts = texts_dir.is_dir() and bool(text_files(texts_dir))
    folders = [d for d in sorted(root.iterdir()) if d.is_dir() and (d / "prompt.txt").is_file()]
    if len(prompt_files) > 1:
        names = ", ".join(p.name for p in prompt_files)
        raise DataError(
            f"{root}: ambiguous: several prompt files ({names}); keep one or pass --mapping"
        )
    found = [
        *(f"{p.name} (layout A)" for p in prompt_files),
        *([f"{PROMPT_TEXTS_DIR}/ with <prompt_id>.txt files (layout C)"] if has_texts else []),
        *(
            [f"prompt folders with prompt.txt such as {folders[0].name}/ (layout B)"]
            if folders
            else []
        ),
    ]
    if len(found) > 1:
        raise DataError(
            f"{root}: ambiguous layout: both {found[0]} and {found[1]}; keep one or pass --mapping"
        )
    if prompt_files:
        return LAYOUT_A, prompt_files[0]
    if has_texts:
        return LAYOUT_C, texts_dir
    if folders:
        for stray in sorted(root.iterdir()):
            if is_image(stray):
                raise DataError(
                    f"{stray}: image outside a prompt folder (layout B expects <prompt_id>/<model>.png)"
                )
            if (
                stray.is_dir()
                and stray not in folders
                and any(is_image(p) for p in stray.iterdir())
            ):
                raise DataError(
                    f"{stray}: folder holds images but no prompt.txt (layout B needs <prompt_id>/prompt.txt)"
                )
        return LAYOUT_B, folders
    raise DataError(
        f"{root}: cannot detect the layout; expected (A) prompts.jsonl|csv|json + images/<model>/<prompt_id>.<ext>, "
        "(B) <prompt_id>/prompt.txt + <prompt_id>/<model>.<ext> "
        "or (C) prompts/<prompt_id>.txt + images/<model>/<prompt_id>.<ext>; otherwise pass --mapping FILE "
        "(CSV/JSONL with prompt_id, prompt, image, t2i_model)"
    )


def import_folder(root: Path, mapping: Path | None = None) -> ImportResult:
    """Build manifest items from `root` (layout detected) or from an explicit `mapping`."""
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root}: {'not a folder' if root.exists() else 'folder not found'}")
    if mapping is not None:
        return _import_mapping(root, Path(mapping))
    layout, source = detect_layout(root)
    if isinstance(source, list):
        return _import_prompt_folders(root, source)
    if layout == LAYOUT_A:
        return _import_image_folders(root, layout, load_prompt_file(source), source.name)
    return _import_image_folders(root, layout, load_prompt_texts(source), f"{source.name}/")
