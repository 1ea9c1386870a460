"""Small snapshots of the public preference sets in their documented schemas, for the
importer's tests. Each writer cites the card or repository file its layout is taken from (the
same sources the presets in `titjudge.data.public.sets` cite).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image


def picture(colour: tuple[int, int, int], fmt: str = "JPEG") -> bytes:
    """An 8x8 image of one colour, encoded as `fmt`."""
    out = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(out, format=fmt)
    return out.getvalue()


def name_of(data: bytes, suffix: str) -> str:
    return hashlib.sha1(data).hexdigest()[:10] + suffix


def hpdv2(folder: Path, groups: Sequence[tuple[str, Sequence[bytes], Sequence[object]]]) -> Path:
    """HPDv2's test split (huggingface.co/datasets/ymhao/HPDv2, its loader HPDv2.py, and
    hpsv2/evaluation.py): test.json a JSON array of {prompt, image_path: [file names], rank:
    [one per image, smaller better], raw_annotations: [{rank, user_hash}]}; the images in
    test/ (test.tar.gz unpacked)."""
    (folder / "test").mkdir(parents=True, exist_ok=True)
    rows = []
    for prompt, images, ranks in groups:
        names = []
        for data in images:
            names.append(name_of(data, ".jpg"))
            (folder / "test" / names[-1]).write_bytes(data)
        rows.append(
            {
                "prompt": prompt,
                "image_path": names,
                "rank": list(ranks),
                "raw_annotations": [{"rank": list(ranks), "user_hash": "u0"}],
            }
        )
    (folder / "test.json").write_text(json.dumps(rows))
    return folder


def hpdv3(folder: Path, rows: Sequence[tuple[str, bytes | None, bytes, str, str]]) -> Path:
    """HPDv3's test split (huggingface.co/datasets/MizzenAI/HPDv3): test.json a JSON array of
    {prompt, path1, path2, model1, model2}, path1 always the preferred image, paths relative
    to the dataset root ("images/<uuid>.jpg"); a None first image is a path with no file
    (MizzenAI/HPSv3 issue 21: test images missing from the archives)."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    shaped = []
    for n, (prompt, first, second, model1, model2) in enumerate(rows):
        paths = []
        for data, fallback in ((first, f"missing{n}.jpg"), (second, "")):
            name = name_of(data, ".jpg") if data is not None else fallback
            if data is not None:
                (folder / "images" / name).write_bytes(data)
            paths.append(f"images/{name}")
        shaped.append(
            {
                "prompt": prompt,
                "path1": paths[0],
                "path2": paths[1],
                "model1": model1,
                "model2": model2,
            }
        )
    (folder / "test.json").write_text(json.dumps(shaped))
    return folder


#: ImageRewardDB's metadata columns (the dataset card and its loading script ImageRewardDB.py)
IMAGEREWARD_SCHEMA = pa.schema(
    [
        ("image_path", pa.string()),
        ("prompt_id", pa.string()),
        ("prompt", pa.string()),
        ("classification", pa.string()),
        ("image_amount_in_total", pa.int64()),
        ("rank", pa.int64()),
        ("overall_rating", pa.int64()),
        ("image_text_alignment_rating", pa.int64()),
        ("fidelity_rating", pa.int64()),
    ]
)


def imagerewarddb(
    folder: Path, rows: Sequence[tuple[str, str, bytes, int]], split: str = "test"
) -> Path:
    """ImageRewardDB (huggingface.co/datasets/THUDM/ImageRewardDB): metadata-{split}.parquet
    at the root, one row per image (`rows`: prompt_id, prompt, image bytes, rank), image_path
    relative to the root; the images as the hub ships them, <uuid>.webp files inside
    images/{split}/{split}_1.zip."""
    archive = folder / "images" / split / f"{split}_1.zip"
    archive.parent.mkdir(parents=True, exist_ok=True)
    columns: dict[str, list[object]] = {name: [] for name in IMAGEREWARD_SCHEMA.names}
    with zipfile.ZipFile(archive, "w") as zipped:
        for prompt_id, prompt, data, rank in rows:
            name = name_of(data, ".webp")
            if f"{split}_1/{name}" not in zipped.namelist():
                zipped.writestr(f"{split}_1/{name}", data)
            values = {
                "image_path": f"images/{split}/{split}_1/{name}",
                "prompt_id": prompt_id,
                "prompt": prompt,
                "classification": "People",
                "image_amount_in_total": sum(1 for r in rows if r[0] == prompt_id),
                "rank": rank,
                "overall_rating": 5,
                "image_text_alignment_rating": 5,
                "fidelity_rating": 5,
            }
            for key, value in values.items():
                columns[key].append(value)
    pq.write_table(
        pa.table(columns, schema=IMAGEREWARD_SCHEMA), folder / f"metadata-{split}.parquet"
    )
    return folder


def evalmuse(folder: Path, rows: Sequence[tuple[str, str, str, bytes, object]]) -> Path:
    """EvalMuse-40K (huggingface.co/datasets/DY-Evalab/EvalMuse, dataset_info): train_list.json
    a JSON array of {prompt_id, prompt, type, img_path, total_score: [one 1-5 score per
    annotator], element_score: a string, promt_meaningless, split_confidence,
    attribute_confidence, fidelity_label}; `rows`: prompt_id, prompt, img_path (its first
    folder the generator), image bytes, total_score. The images unpacked from images.zip
    under images/."""
    shaped = []
    for prompt_id, prompt, img_path, data, total in rows:
        path = folder / "images" / img_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        shaped.append(
            {
                "prompt_id": prompt_id,
                "prompt": prompt,
                "type": "real",
                "img_path": img_path,
                "total_score": total,
                "element_score": json.dumps({"cat (animal)": [1, 1]}),
                "promt_meaningless": [0, 0],
                "split_confidence": [0, 0],
                "attribute_confidence": [1, 1],
                "fidelity_label": ["no", "no"],
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train_list.json").write_text(json.dumps(shaped))
    return folder


def genai_bench(
    folder: Path, prompts: Mapping[str, tuple[str, Mapping[str, tuple[bytes, object]]]]
) -> Path:
    """GenAI-Bench-1600's image ratings (huggingface.co/datasets/BaiqiL/GenAI-Bench-1600; read by
    t2v_metrics' dataset.py GenAIBench_Image): genai_image.json an object keyed by the prompt
    id, each {id, prompt, models: {MODEL: [three 1-5 ratings]}}; images <MODEL>/<key>.jpeg.
    `prompts`: key -> (prompt, {model: (image bytes, ratings)})."""
    doc = {}
    for key, (prompt, models) in prompts.items():
        for model, (data, _) in models.items():
            (folder / model).mkdir(parents=True, exist_ok=True)
            (folder / model / f"{key}.jpeg").write_bytes(data)
        doc[key] = {
            "id": key,
            "prompt": prompt,
            "models": {model: ratings for model, (_, ratings) in models.items()},
        }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "genai_image.json").write_text(json.dumps(doc))
    return folder


def longt2ibench(folder: Path, rows: Sequence[tuple[str, str, bytes, object]]) -> Path:
    """LongT2IBench (github.com/yzc-ippl/LongT2IBench, README and test_score.py; the hub's
    yzc002/LongT2IBench holds test.json at its root): test.json a JSON array of
    {en_prompt_text, img_path, "Align ratio", en_structured_data}; images at
    data/<img_path> (test_score.py's img_root "./data"). `rows`: prompt, img_path, image
    bytes, Align ratio."""
    shaped = []
    for prompt, img_path, data, ratio in rows:
        path = folder / "data" / img_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        shaped.append(
            {
                "en_prompt_text": prompt,
                "img_path": img_path,
                "Align ratio": ratio,
                "en_structured_data": {
                    "entities": ["fox"],
                    "entity_alignment": {"align": ["fox"], "misalign": []},
                    "attribute_alignment": {"align": [], "misalign": []},
                    "relation_alignment": {"align": [], "misalign": []},
                },
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.json").write_text(json.dumps(shaped))
    return folder
