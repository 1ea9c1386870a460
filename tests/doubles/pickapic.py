"""Pick-a-Pic v2 shards in the dataset's documented schema, for the importer's tests and its
benchmark.

Schema: the dataset card's `dataset_info` (https://huggingface.co/datasets/yuvalkirstain/
pickapic_v2, README.md): are_different bool, best_image_uid string, caption string,
created_at timestamp[ns], has_label bool, image_0_uid / image_0_url / image_1_uid /
image_1_url string, jpg_0 / jpg_1 binary (the image bytes), label_0 / label_1 float64,
model_0 / model_1 string, ranking_id / user_id / num_example_per_prompt / __index_level_0__
int64; splits train, validation, test, validation_unique, test_unique. The hub serves them as
data/<split>-NNNNN-of-MMMMM.parquet.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema(
    [
        ("are_different", pa.bool_()),
        ("best_image_uid", pa.string()),
        ("caption", pa.string()),
        ("created_at", pa.timestamp("ns")),
        ("has_label", pa.bool_()),
        ("image_0_uid", pa.string()),
        ("image_0_url", pa.string()),
        ("image_1_uid", pa.string()),
        ("image_1_url", pa.string()),
        ("jpg_0", pa.binary()),
        ("jpg_1", pa.binary()),
        ("label_0", pa.float64()),
        ("label_1", pa.float64()),
        ("model_0", pa.string()),
        ("model_1", pa.string()),
        ("ranking_id", pa.int64()),
        ("user_id", pa.int64()),
        ("num_example_per_prompt", pa.int64()),
        ("__index_level_0__", pa.int64()),
    ]
)


@dataclass(frozen=True)
class Row:
    caption: str
    jpg_0: bytes
    jpg_1: bytes
    label_0: float
    label_1: float
    has_label: bool = True
    are_different: bool = True
    model_0: str = "sdxl"
    model_1: str = "dalle-2"


def table(rows: Sequence[Row], start: int = 0, drop: Sequence[str] = ()) -> pa.Table:
    """`rows` as one Pick-a-Pic v2 table (`drop`: columns left out, for a wrong schema)."""
    columns: dict[str, list[object]] = {name: [] for name in SCHEMA.names}
    for n, row in enumerate(rows, start):
        values = {
            "are_different": row.are_different,
            "best_image_uid": f"u{n}a" if row.label_0 > row.label_1 else f"u{n}b",
            "caption": row.caption,
            "created_at": dt.datetime(2023, 5, 1),
            "has_label": row.has_label,
            "image_0_uid": f"u{n}a",
            "image_0_url": f"https://example.invalid/{n}a.jpg",
            "image_1_uid": f"u{n}b",
            "image_1_url": f"https://example.invalid/{n}b.jpg",
            "jpg_0": row.jpg_0,
            "jpg_1": row.jpg_1,
            "label_0": row.label_0,
            "label_1": row.label_1,
            "model_0": row.model_0,
            "model_1": row.model_1,
            "ranking_id": n,
            "user_id": 100 + n,
            "num_example_per_prompt": 1,
            "__index_level_0__": n,
        }
        for name in SCHEMA.names:
            columns[name].append(values[name])
    found = pa.table(columns, schema=SCHEMA)
    return found.drop_columns(list(drop)) if drop else found


def write_split(
    folder: Path, split: str, shards: Sequence[Sequence[Row]], drop: Sequence[str] = ()
) -> None:
    """The split's shards as the hub names them, under `folder/data/`."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    start = 0
    for number, rows in enumerate(shards):
        name = f"{split}-{number:05d}-of-{len(shards):05d}.parquet"
        pq.write_table(table(rows, start, drop), folder / "data" / name)
        start += len(rows)
