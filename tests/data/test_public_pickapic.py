"""`titjudge data import SOURCE --preset pickapic-v2 --out DIR` on a small Pick-a-Pic v2 sample
built in the dataset's documented schema (the card's dataset_info, cited in
`doubles.pickapic`)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from doubles.pickapic import Row, write_split
from PIL import Image

from titjudge.cli import main
from titjudge.data.manifest import load_manifest
from titjudge.data.pairs import load_pairs
from titjudge.data.public.importer import ImportOptions, import_public, prompt_id_of
from titjudge.errors import DataError

LONG = "a red fox asleep on a mossy stone beside a cold river at dawn in thick fog"


def jpeg(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(out, format="JPEG")
    return out.getvalue()


X, Y, Z, W, U, V = (jpeg((40 * i, 200 - 30 * i, 90)) for i in range(6))
#: (caption, image 0, image 1, label_0, label_1, has_label, are_different)
ROWS = [
    ("a cat", X, Y, 1.0, 0.0, True, True),  # 0: X wins
    ("a cat", Y, X, 0.0, 1.0, True, True),  # 1: X wins again, shown second: one pair, 2-0
    ("a dog", Z, W, 0.5, 0.5, True, True),  # 2: a tie
    ("a dog", Z, W, 0.0, 0.0, False, True),  # 3: unlabelled: dropped
    ("a cow", U, V, 0.3, 0.7, True, True),  # 4: outside the schema: dropped
    ("a cow", b"not an image", V, 1.0, 0.0, True, True),  # 5: bytes that do not decode
    (LONG, U, V, 0.0, 1.0, True, True),  # 6: V wins, a long prompt
    ("a hen", U, U, 1.0, 0.0, True, False),  # 7: the same image twice: dropped
]


def snapshot(folder: Path, rows=ROWS, drop: tuple[str, ...] = ()) -> Path:
    shaped = [
        Row(c, a, b, l0, l1, labelled, different) for c, a, b, l0, l1, labelled, different in rows
    ]
    write_split(folder, "test_unique", [shaped], drop)
    write_split(folder, "train", [shaped[:1]], drop)
    return folder


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_an_import_keeps_each_image_once_and_each_pair_by_the_sets_labels(tmp_path):
    source, out = snapshot(tmp_path / "snap"), tmp_path / "out"
    counts = import_public(str(source), "pickapic-v2", out, ImportOptions(), say=lambda _: None)
    items = {item.item_id: item for item in load_manifest(out / "manifest.jsonl")}
    cat, dog, long = (prompt_id_of(p) for p in ("a cat", "a dog", LONG))
    # X and Y of "a cat" are one item each though they appear in two rows; U and V in
    # the long prompt; the dropped rows' images never became items
    assert sorted((i.prompt_id, i.t2i_model) for i in items.values()) == sorted(
        [
            (cat, "sdxl"),
            (cat, "dalle-2"),
            (dog, "sdxl"),
            (dog, "dalle-2"),
            (long, "sdxl"),
            (long, "dalle-2"),
        ]
    )
    assert len(list((out / "images").iterdir())) == 6
    pairs = load_pairs(out / "pairs.csv", items)
    by_prompt = {p.prompt_id: p for p in pairs}
    assert len(pairs) == 3 and (counts.pairs, counts.ties, counts.tallied.merged) == (3, 1, 1)
    x_item = next(i for i in items.values() if i.prompt_id == cat and i.t2i_model == "sdxl")
    cat_pair = by_prompt[cat]
    winner = cat_pair.item_a if cat_pair.winner == "a" else cat_pair.item_b
    assert winner == x_item.item_id  # 2 votes to 0
    # the votes that decided each pair, kept in pairs.csv: rows 0 and 1 merged, 2-0
    assert cat_pair.votes == ((2, 0, 0) if cat_pair.winner == "a" else (0, 2, 0))
    assert by_prompt[dog].winner == "tie" and by_prompt[dog].votes == (0, 0, 1)
    v_item = next(i for i in items.values() if i.prompt_id == long and i.t2i_model == "dalle-2")
    long_pair = by_prompt[long]
    assert (long_pair.item_b if long_pair.winner == "b" else long_pair.item_a) == v_item.item_id
    assert counts.rows == 8 and counts.dropped == {
        "no label (has_label false)": 1,
        "label_0/label_1 outside the schema's (1, 0), (0, 1), (0.5, 0.5)": 1,
        "image bytes that do not decode (UnidentifiedImageError)": 1,
        "the two images are the same (are_different false)": 1,
    }
    card = (out / "DATASET.md").read_text()
    assert "split test_unique" in card and "- rows read: 8" in card
    assert "- 1 rows: no label (has_label false)" in card
    assert (
        "- pairs: 3 (1 ties)" in card
        and "huggingface.co/datasets/yuvalkirstain/pickapic_v2" in card
    )


def test_a_rerun_writes_no_image_again_and_the_same_files(tmp_path):
    source, out = snapshot(tmp_path / "snap"), tmp_path / "out"
    import_public(str(source), "pickapic-v2", out, ImportOptions(), say=lambda _: None)
    first = {name: (out / name).read_bytes() for name in ("manifest.jsonl", "pairs.csv")}
    again = import_public(str(source), "pickapic-v2", out, ImportOptions(), say=lambda _: None)
    assert (again.images_written, again.images_present) == (0, 6)
    assert {name: (out / name).read_bytes() for name in first} == first  # ids stable


def test_limit_is_a_seeded_sample_and_min_prompt_words_keeps_long_prompts(tmp_path):
    source = snapshot(tmp_path / "snap")

    def pairs(seed: int, name: str, **options) -> list[dict[str, str]]:
        out = tmp_path / name
        import_public(
            str(source), "pickapic-v2", out, ImportOptions(seed=seed, **options), say=lambda _: None
        )
        return rows_of(out / "pairs.csv")

    assert pairs(3, "a", limit=2) == pairs(3, "b", limit=2)  # the same rows every time
    assert len(pairs(3, "c", limit=2)) <= 2
    long = pairs(0, "d", min_prompt_words=10)
    assert [row["prompt_id"] for row in long] == [prompt_id_of(LONG)]


def test_strict_refuses_the_first_row_outside_the_schema_and_writes_nothing(tmp_path):
    source, out = snapshot(tmp_path / "snap"), tmp_path / "out"
    with pytest.raises(
        DataError, match=r"row 3 \(row 3 of the split\): no label \(has_label false\) \(--strict\)"
    ):
        import_public(
            str(source), "pickapic-v2", out, ImportOptions(strict=True), say=lambda _: None
        )
    assert not (out / "manifest.jsonl").exists() and not (out / "pairs.csv").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--preset", "pick-a-pic"],
            "unknown preset 'pick-a-pic'; presets: pickapic-v2, hpdv2, hpdv3, imagerewarddb, "
            "evalmuse, genai-bench, longt2ibench",
        ),
        (
            ["--preset", "pickapic-v2", "--split", "dev"],
            "no shards of split 'dev' (this snapshot has: test_unique, train)",
        ),
        (["--split", "test"], "--split go with --preset"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, says):
    source = snapshot(tmp_path / "snap")
    code = main(["data", "import", str(source), "--out", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_snapshot_without_the_presets_columns_names_them(tmp_path, capsys):
    source = snapshot(tmp_path / "snap", drop=("jpg_1", "label_1"))
    code = main(
        ["data", "import", str(source), "--preset", "pickapic-v2", "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "not the pickapic-v2 schema: missing column(s) label_1, jpg_1" in err


def test_an_hf_source_resolves_in_the_local_hub_cache(tmp_path, monkeypatch, capsys):
    """The cache as huggingface_hub lays it out (its cache-system guide):
    <cache>/datasets--<owner>--<name>/snapshots/<commit>/..., refs/main holding the commit."""
    cache = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "datasets--yuvalkirstain--pickapic_v2"
    snapshot(repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "out"
    assert (
        main(
            [
                "data",
                "import",
                "hf:yuvalkirstain/pickapic_v2",
                "--preset",
                "pickapic-v2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    card = (out / "DATASET.md").read_text()
    assert f"- revision: {commit}" in card and "(hub dataset yuvalkirstain/pickapic_v2)" in card
    code = main(
        [
            "data",
            "import",
            "hf:someone/absent",
            "--preset",
            "pickapic-v2",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "hf download someone/absent --repo-type dataset" in err


def test_a_judge_runs_on_the_imported_set_and_its_accuracy_counts_decided_pairs(tmp_path, capsys):
    source, out = snapshot(tmp_path / "snap"), tmp_path / "set"
    import_public(str(source), "pickapic-v2", out, ImportOptions(), say=lambda _: None)
    items = load_manifest(out / "manifest.jsonl")
    # each image described as its prompt (sdxl's images) or as something else (dalle-2's):
    # the lexical judge then prefers sdxl's image in every pair
    lines = [
        {
            "item_id": i.item_id,
            "image_sha256": i.image.stem,
            "description": i.prompt if i.t2i_model == "sdxl" else "an empty blue room",
        }
        for i in items
    ]
    (out / "descriptions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = {
        "name": "pickapic",
        "data": {"manifest": str(out / "manifest.jsonl"), "human_pairs": str(out / "pairs.csv")},
        "describer": {"model": f"replay:{out / 'descriptions.jsonl'}"},
        "judges": [{"name": "lexical", "kind": "lexical"}],
        "run": {
            "out": str(tmp_path / "runs"),
            "cache_dir": str(tmp_path / "cache"),
        },
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config))
    assert main(["run", str(path), "--out", str(tmp_path / "run")]) == 0
    shown = capsys.readouterr().out
    written = json.loads((tmp_path / "run" / "metrics.json").read_text())
    metrics = written["variants"]["lexical"]
    # the run says which set and protocol its numbers follow, and that PickScore's do not
    assert (
        written["dataset"]["preset"] == "pickapic-v2" and written["dataset"]["comparable"] is False
    )
    assert (
        "data: Pick-a-Pic v2 (pickapic-v2; split test_unique): pairwise accuracy over the decided"
        in " ".join(shown.split())
    )
    assert main(["metrics", str(tmp_path / "run")]) == 0
    assert "follow their own protocol" in " ".join(capsys.readouterr().out.split())
    # three pairs: the cat pair (sdxl won), the long one (dalle-2 won), the dog tie; the tie
    # is never an accuracy pair, so 1 of 2 decided pairs is right
    assert (metrics["n_pairs"], metrics["n_correct"]) == (2, 1)
    # PickScore's tie-aware score counts all three: the cat pair right (1), the long pair
    # wrong (0), the dog tie called a win at threshold 0 (0.5): 1.5 / 3. Every score
    # difference is 1.0 (1.0 against 0.0), so the best threshold is 1.0, every pair a
    # predicted tie: 0.5 + 0.5 + 1 = 2 / 3
    protocol = metrics["protocol"]
    assert protocol["measure"] == "tie-aware" and protocol["n"] == 3
    assert protocol["value"] == pytest.approx(0.5)
    assert protocol["values"]["best_threshold_value"] == pytest.approx(2 / 3)
    assert protocol["values"]["best_threshold"] == pytest.approx(1.0)


def test_the_help_lists_every_preset():
    from titjudge.cli.data import PRESET_NAMES
    from titjudge.data.public.sets import presets

    assert tuple(presets()) == PRESET_NAMES


def test_an_image_too_large_to_decode_safely_is_dropped_not_a_traceback(tmp_path, monkeypatch):
    """PIL refuses an image over twice its pixel limit (DecompressionBombError): counted with
    the undecodable ones; a set of nothing but such rows is one line."""
    from PIL import Image as PILImage

    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", 20)  # the 8x8 test images are 64 pixels
    source = snapshot(tmp_path / "snap")
    with pytest.raises(
        DataError,
        match=r"could be imported \(.*image bytes that do not decode \(DecompressionBombError\)",
    ):
        import_public(
            str(source), "pickapic-v2", tmp_path / "out", ImportOptions(), say=lambda _: None
        )
    assert not (tmp_path / "out" / "manifest.jsonl").exists()


def test_a_broken_dataset_file_is_one_line_before_the_run(tmp_path, capsys):
    source, out = snapshot(tmp_path / "snap"), tmp_path / "set"
    import_public(str(source), "pickapic-v2", out, ImportOptions(), say=lambda _: None)
    (out / "dataset.json").write_text(json.dumps({"preset": "pickapic-v2"}))
    replay = out / "descriptions.jsonl"
    replay.write_text(json.dumps({"image_sha256": "0" * 64, "description": "a cat"}) + "\n")
    config = {
        "name": "broken",
        "data": {"manifest": str(out / "manifest.jsonl"), "human_pairs": str(out / "pairs.csv")},
        "describer": {"model": f"replay:{replay}"},
        "judges": [{"name": "lexical", "kind": "lexical"}],
        "run": {"out": str(tmp_path / "runs"), "cache_dir": str(tmp_path / "cache")},
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config))
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "dataset.json: not a dataset file: field 'title'" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def assert_imports_as_the_parquet(source: Path, tmp_path: Path) -> None:
    """`source` (the same ROWS in another layout) imports to the counts and the pairs.csv,
    byte for byte, that the parquet snapshot of ROWS imports to."""
    other = import_public(
        str(source), "pickapic-v2", tmp_path / "other", ImportOptions(), say=lambda _: None
    )
    parquet = import_public(
        str(snapshot(tmp_path / "snap")),
        "pickapic-v2",
        tmp_path / "p",
        ImportOptions(),
        say=lambda _: None,
    )
    assert (other.rows, other.pairs, other.dropped) == (
        parquet.rows,
        parquet.pairs,
        parquet.dropped,
    )
    pairs = (tmp_path / "other" / "pairs.csv").read_bytes()
    assert pairs == (tmp_path / "p" / "pairs.csv").read_bytes()


def test_a_save_to_disk_folder_of_arrow_streams_imports_as_its_parquet_does(tmp_path):
    """The `datasets` library's save_to_disk layout (its arrow_dataset.py / arrow_writer.py:
    `<split>/data-00000-of-00001.arrow`, Arrow IPC streams written by RecordBatchStreamWriter,
    beside dataset_info.json and state.json)."""
    import pyarrow as pa
    from doubles.pickapic import table

    shaped = [Row(c, a, b, l0, l1, lab, diff) for c, a, b, l0, l1, lab, diff in ROWS]
    folder = tmp_path / "saved" / "test_unique"
    folder.mkdir(parents=True)
    found = table(shaped)
    with pa.ipc.new_stream(str(folder / "data-00000-of-00001.arrow"), found.schema) as writer:
        for batch in found.to_batches(max_chunksize=3):  # several batches, as datasets writes
            writer.write_batch(batch)
    (folder / "state.json").write_text("{}")
    assert_imports_as_the_parquet(tmp_path / "saved", tmp_path)


def test_webdataset_tar_shards_import_as_the_parquet_does(tmp_path):
    """WebDataset shards (github.com/webdataset/webdataset README, "WebDataset format": a
    sample's files are adjacent and share the name up to the first dot, each extension one
    field; the hub's webdataset loader reads `.json` as an object): here `<key>.json` holds
    the light columns and `<key>.jpg_0` / `<key>.jpg_1` the images."""
    import tarfile

    shaped = [Row(c, a, b, l0, l1, lab, diff) for c, a, b, l0, l1, lab, diff in ROWS]
    (tmp_path / "wds").mkdir()
    with tarfile.open(tmp_path / "wds" / "test_unique-000000.tar", "w") as archive:
        for n, row in enumerate(shaped):
            meta = {
                "caption": row.caption,
                "label_0": row.label_0,
                "label_1": row.label_1,
                "has_label": row.has_label,
                "are_different": row.are_different,
                "model_0": row.model_0,
                "model_1": row.model_1,
            }
            for name, data in (
                (f"s{n:04d}.json", json.dumps(meta).encode()),
                (f"s{n:04d}.jpg_0", row.jpg_0),
                (f"s{n:04d}.jpg_1", row.jpg_1),
            ):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    assert_imports_as_the_parquet(tmp_path / "wds", tmp_path)
