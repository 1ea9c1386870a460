"""A split's shards in a snapshot, streamed a batch of rows at a time.

The hub names a split's files by the split: `data/<split>-00000-of-00004-<hash>.parquet`
(what `push_to_hub` writes), `<split>-*.parquet`, a folder `<split>/` (the parquet
conversion's `<config>/<split>/0000.parquet`, or the `datasets` library's
`save_to_disk` folder `<split>/data-00000-of-00001.arrow`), WebDataset `.tar` shards
(`<split>-000000.tar`: a sample's files share a key, each file a column by its extension, a
`.json` file's fields columns too), `<split>.jsonl`, or `<split>.json` (a JSON
array of row objects, as HPDv2 and ImageReward ship their test annotations, or an object of
row objects by key, as GenAI-Bench does). A preset whose set names its files otherwise
(ImageRewardDB's `metadata-<split>.parquet`) gives their patterns. Parquet is read
with pyarrow one record batch at a time, only the columns asked for, so a shard of image bytes
is never held whole; JSON Lines line by line; a JSON array whole (such files hold annotations
and image paths, never image bytes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from titjudge.errors import DataError, install_hint

SHARD_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".json", ".tar")
#: the `datasets` library's metadata beside its arrow shards: never rows
NOT_SHARDS = frozenset({"state.json", "dataset_info.json", "dataset_dict.json"})
#: rows per batch read: a Pick-a-Pic row holds two images (~0.5-1 MB), so a batch stays small
BATCH_ROWS = 64


@dataclass(frozen=True)
class Shard:
    path: Path
    #: the snapshot's folder (where a set that keeps images as files has them)
    root: Path
    #: rows the shard holds, where its format says without reading it (parquet's footer)
    rows: int | None = None


def _in_split(relative: Path, split: str) -> bool:
    if split in relative.parts[:-1]:
        return True
    return (
        re.fullmatch(rf"{re.escape(split)}(-\d+(-of-\d+)?.*)?", relative.name.split(".")[0])
        is not None
    )


def split_shards(folder: Path, split: str, patterns: Sequence[str] = ()) -> list[Shard]:
    """Every shard of `split` under `folder`, in name order; a DataError naming the splits
    the snapshot has when it has none of this one. `patterns` (a preset's `files`, with
    `{split}`): where the set keeps its split's files instead of the hub's names."""
    if patterns:
        named = sorted(
            {p for pattern in patterns for p in folder.glob(pattern.format(split=split))}
        )
        if not named:
            wanted = ", ".join(pattern.format(split=split) for pattern in patterns)
            raise DataError(f"{folder}: no shards of split {split!r} (looked for {wanted})")
        return [Shard(p, folder, _row_count(p)) for p in named if p.is_file()]
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in SHARD_SUFFIXES
        and p.name not in NOT_SHARDS
        and p.is_file()
        and not any(s.startswith(".") for s in p.relative_to(folder).parts)
    )
    found = [p for p in files if _in_split(p.relative_to(folder), split)]
    if not found:
        have = sorted({_split_name(p.relative_to(folder)) for p in files})
        listed = ", ".join(have) if have else "no parquet or jsonl shards at all"
        raise DataError(f"{folder}: no shards of split {split!r} (this snapshot has: {listed})")
    return [Shard(p, folder, _row_count(p)) for p in found]


def _split_name(relative: Path) -> str:
    stem = relative.name.split(".")[0]
    return (
        re.sub(r"-\d+(-of-\d+)?.*$", "", stem)
        if relative.parent == Path(".") or relative.parent.name == "data"
        else relative.parent.name
    )


def _row_count(path: Path) -> int | None:
    if path.suffix != ".parquet":
        return None
    return _parquet(path).metadata.num_rows


def _parquet(path: Path) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            f"{path}: reading parquet needs pyarrow; install it with: {install_hint('datasets')}"
        ) from None
    try:
        # column chunks read through a 1 MiB buffer, not pre-buffered: a row group of image
        # bytes is streamed, not held whole
        return pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
    except Exception as exc:  # pyarrow's ArrowInvalid and OSError: not a parquet file
        raise DataError(f"{path}: not a readable parquet file ({exc})") from None


def _arrow_stream(path: Path) -> Any:
    """An Arrow IPC stream (the `datasets` library's cache and `save_to_disk` shards,
    `<split>/data-00000-of-00001.arrow`), memory-mapped: read a batch at a time."""
    try:
        import pyarrow as pa
    except ImportError:
        raise DataError(
            f"{path}: reading arrow needs pyarrow; install it with: {install_hint('datasets')}"
        ) from None
    try:
        return pa.ipc.open_stream(pa.memory_map(str(path)))
    except Exception as exc:  # pyarrow's ArrowInvalid and OSError: not an arrow stream
        raise DataError(f"{path}: not a readable arrow stream ({exc})") from None


def shard_columns(shard: Shard) -> list[str]:
    """The column names a shard holds."""
    if shard.path.suffix == ".parquet":
        return list(_parquet(shard.path).schema_arrow.names)
    if shard.path.suffix == ".arrow":
        return list(_arrow_stream(shard.path).schema.names)
    if shard.path.suffix == ".tar":
        for row in _tar_rows(shard.path, None):
            return list(row)
        return []
    for row in _jsonl_rows(shard.path):
        return list(row)
    return []


def check_columns(shards: Sequence[Shard], needed: Sequence[str], preset: str) -> None:
    """Every shard holds every column the preset reads, or one DataError naming the missing."""
    for shard in shards:
        have = set(shard_columns(shard))
        missing = [c for c in needed if c not in have]
        if missing:
            raise DataError(
                f"{shard.path}: not the {preset} schema: missing column(s) {', '.join(missing)}"
            )


def iter_rows(shard: Shard, columns: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The shard's rows, only `columns`, a batch at a time."""
    if shard.path.suffix == ".parquet":
        for batch in _parquet(shard.path).iter_batches(
            batch_size=BATCH_ROWS, columns=list(columns)
        ):
            yield from batch.to_pylist()
        return
    if shard.path.suffix == ".arrow":
        for batch in _arrow_stream(shard.path):
            for start in range(0, batch.num_rows, BATCH_ROWS):
                yield from batch.slice(start, BATCH_ROWS).select(list(columns)).to_pylist()
        return
    if shard.path.suffix == ".tar":
        for row in _tar_rows(shard.path, set(columns)):
            yield {c: row.get(c) for c in columns}
        return
    for row in _jsonl_rows(shard.path):
        yield {c: row.get(c) for c in columns}


def _tar_rows(path: Path, wanted: set[str] | None) -> Iterator[dict[str, Any]]:
    """A WebDataset shard's samples, one at a time: the files of a sample are adjacent in the
    tar and share a key (the name up to the first dot of its base name), each file a column
    named by the rest (`0001.jpg_0` -> column `jpg_0`), as the WebDataset format and the hub's
    webdataset loader read them; a `json` file's fields are columns too (and `json` the
    object). With `wanted`, only those columns' files are read (the others are skipped)."""
    import tarfile

    with _open_tar(path) as archive:
        key: str | None = None
        row: dict[str, Any] = {}
        try:
            for member in archive:
                if not member.isfile():
                    continue
                folder, _, base = member.name.rpartition("/")
                stem, dot, column = base.partition(".")
                if not dot or stem.startswith("."):
                    continue
                sample = f"{folder}/{stem}" if folder else stem
                if sample != key:
                    if key is not None:
                        yield row
                    key, row = sample, {"__key__": sample}
                if wanted is not None and column not in wanted and column != "json":
                    row[column] = None
                    continue
                handle = archive.extractfile(member)
                data = handle.read() if handle is not None else b""
                if column == "json":
                    row.update(_sample_json(path, member.name, data))
                row[column] = data if column != "json" else row.get("json")
        except tarfile.TarError as exc:
            raise DataError(f"{path}: a damaged tar shard ({exc})") from None
        if key is not None:
            yield row


def _open_tar(path: Path) -> Any:
    import tarfile

    try:
        return tarfile.open(path, "r:*")
    except (OSError, tarfile.TarError) as exc:
        raise DataError(f"{path}: not a readable tar shard ({exc})") from None


def _sample_json(path: Path, name: str, data: bytes) -> dict[str, Any]:
    try:
        found = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: {name} is not JSON ({exc})") from None
    if not isinstance(found, dict):
        raise DataError(f"{path}: {name} must hold a JSON object")
    return {**found, "json": found}


def _jsonl_rows(path: Path) -> Iterator[dict[str, Any]]:
    if path.suffix == ".json":
        yield from _json_array_rows(path)
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{number}: a row must be a JSON object")
            yield row


def _json_array_rows(path: Path) -> Iterator[dict[str, Any]]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable JSON file ({exc})") from None
    if isinstance(rows, dict) and all(isinstance(row, dict) for row in rows.values()):
        # an object of row objects by key (GenAI-Bench's genai_image.json): each row with
        # its key as __key__
        for name, row in rows.items():
            yield {"__key__": name, **row}
        return
    if not isinstance(rows, list):
        raise DataError(
            f"{path}: a JSON shard must be an array of row objects, or an object of them"
        )
    for number, row in enumerate(rows):
        if not isinstance(row, dict):
            raise DataError(f"{path}: element {number} of the array is not an object")
        yield row


__all__ = ["BATCH_ROWS", "Shard", "check_columns", "iter_rows", "shard_columns", "split_shards"]
