"""Benchmark 21: importing a public preference set, Pick-a-Pic v2 shaped, in bounded memory.

A 100,000-row set in the dataset's schema (tests/doubles/pickapic.py: the card's columns,
the hub's data/<split>-NNNNN-of-MMMMM.parquet shards, 10 of them): 20,000 prompts, each
with a pool of 4 images (a different JPEG each, 96x96 random noise, about 9 KB: real Pick-a-Pic
images are about 10-30x larger, which changes the disk traffic, not the memory per row) and 5
rows per prompt drawing 2 of them, labels 45% / 45% / 10% ties. `titjudge data import SNAPSHOT
--preset pickapic-v2 --split train --out DIR` runs in a child process: wall, CPU, rows/s, peak
RSS; then again over the same DIR (every image already there). Baseline, in the same run: the
import written the way a notebook would, the split loaded whole (`pyarrow.parquet.read_table`
of every shard, `to_pylist`), then the same images, manifest and pairs written.

  python benchmarks/public_import.py [--quick]
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402, F401  (puts tests/ on sys.path for the doubles package)
from harness import Section, Table, fmt, run_measured, standalone, timed_section  # noqa: E402

TITLE = "21. Importing a public preference set (Pick-a-Pic v2 shaped) in bounded memory"
POOL, ROWS_PER_PROMPT, SHARDS = 4, 5, 10
NOTE = (
    "titjudge decodes every image once (one that does not decode is dropped and counted, not "
    "imported) and reads the shards twice (labels first, images of the chosen rows then); the "
    "baseline does neither, and holds the whole split in memory."
)


def _jpeg(rng: random.Random) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    noise = rng.randbytes(96 * 96 * 3)
    Image.frombytes("RGB", (96, 96), noise).save(out, format="JPEG", quality=90)
    return out.getvalue()


def make_set(folder: Path, rows: int, seed: int = 0) -> None:
    """`rows` rows in SHARDS shards of split `train`."""
    from doubles.pickapic import Row, write_split

    rng = random.Random(seed)
    made: list[Row] = []
    for prompt in range(rows // ROWS_PER_PROMPT):
        caption = f"prompt {prompt}: " + " ".join(
            rng.choice(("red", "fox", "moss", "river", "dawn", "fog", "stone")) for _ in range(30)
        )
        pool = [_jpeg(rng) for _ in range(POOL)]
        for _ in range(ROWS_PER_PROMPT):
            first, second = rng.sample(range(POOL), 2)
            draw = rng.random()
            labels = (1.0, 0.0) if draw < 0.45 else (0.0, 1.0) if draw < 0.9 else (0.5, 0.5)
            made.append(Row(caption, pool[first], pool[second], *labels))
    size = -(-len(made) // SHARDS)
    write_split(folder, "train", [made[i : i + size] for i in range(0, len(made), size)])


def baseline(snapshot: Path, out: Path) -> None:
    """The whole-table import: every shard read into memory, then the same files written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shards = sorted((snapshot / "data").glob("train-*.parquet"))
    rows = pa.concat_tables([pq.read_table(path) for path in shards]).to_pylist()
    (out / "images").mkdir(parents=True, exist_ok=True)
    items: dict[str, dict[str, str]] = {}
    votes: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        prompt_id = "p" + hashlib.sha256(row["caption"].encode()).hexdigest()[:12]
        ids = []
        for side in (0, 1):
            data = row[f"jpg_{side}"]
            digest = hashlib.sha256(data).hexdigest()
            item_id = f"{prompt_id}-{digest[:12]}"
            if item_id not in items:
                path = out / "images" / f"{digest}.jpg"
                path.write_bytes(data)
                items[item_id] = {
                    "item_id": item_id,
                    "prompt_id": prompt_id,
                    "prompt": row["caption"],
                    "image": f"images/{digest}.jpg",
                    "t2i_model": row[f"model_{side}"],
                }
            ids.append(item_id)
        tally = votes.setdefault((ids[0], ids[1]), [0, 0, 0])
        tally[
            0 if row["label_0"] > row["label_1"] else 1 if row["label_1"] > row["label_0"] else 2
        ] += 1
    (out / "manifest.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items.values()))
    with (out / "pairs.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(("prompt_id", "item_a", "item_b", "winner"))
        for (a, b), (wa, wb, _) in votes.items():
            writer.writerow((a.split("-")[0], a, b, "a" if wa > wb else "b" if wb > wa else "tie"))


def run(quick: bool, work: Path) -> Section:
    rows = 5_000 if quick else 100_000
    method = (
        f"{rows:,} rows in {SHARDS} parquet shards of split train, in Pick-a-Pic v2's schema "
        f"({rows // ROWS_PER_PROMPT:,} prompts, {POOL} images each, {ROWS_PER_PROMPT} rows per "
        "prompt; 96x96 JPEGs of noise, ~9 KB). Each import is a child process; wall, CPU "
        "(user + system) and peak RSS from os.wait4. **titjudge**: `titjudge data import "
        "SNAPSHOT --preset pickapic-v2 --split train --out DIR`, then the same command again "
        "over DIR. **baseline**: the split read whole (`pyarrow.parquet.read_table` of every "
        "shard, `to_pylist`), then the same images, manifest and pairs written."
    )

    def body(section: Section) -> None:
        snapshot = work / "pickapic-snapshot"
        if not snapshot.exists():
            make_set(snapshot, rows)
        size = sum(p.stat().st_size for p in (snapshot / "data").iterdir()) / 2**20
        table = Table(["import", "exit", "wall s", "CPU s", "rows/s", "peak RSS MiB"])
        runs = [
            (
                "titjudge, fresh",
                [
                    sys.executable,
                    "-m",
                    "titjudge",
                    "data",
                    "import",
                    str(snapshot),
                    "--preset",
                    "pickapic-v2",
                    "--split",
                    "train",
                    "--out",
                    str(work / "ours"),
                ],
            ),
            (
                "titjudge, re-run (every image there)",
                [
                    sys.executable,
                    "-m",
                    "titjudge",
                    "data",
                    "import",
                    str(snapshot),
                    "--preset",
                    "pickapic-v2",
                    "--split",
                    "train",
                    "--out",
                    str(work / "ours"),
                ],
            ),
            (
                "baseline: split loaded whole",
                [sys.executable, __file__, "baseline", str(snapshot), str(work / "theirs")],
            ),
        ]
        found = {}
        for name, command in runs:
            code, wall, cpu, rss = run_measured(
                command, work / f"{name.split(',')[0].split(':')[0]}.log"
            )
            found[name] = (wall, rss)
            table.add(name, code, fmt(wall, 1), fmt(cpu, 1), fmt(rows / wall, 0), fmt(rss, 0))
        section.tables.append(table)
        ours, theirs = found["titjudge, fresh"], found["baseline: split loaded whole"]
        section.headline(
            "public set import, peak RSS",
            f"{ours[1]:,.0f} MiB",
            f"loaded whole {theirs[1]:,.0f} MiB",
        )
        section.headline(
            "public set import, rows/s",
            f"{rows / ours[0]:,.0f}",
            f"loaded whole {rows / theirs[0]:,.0f}",
        )
        section.notes.append(f"The snapshot's shards hold {size:,.0f} MiB.")
        section.notes.append(NOTE)

    return timed_section("public_import", TITLE, method, body)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "baseline":
        baseline(Path(sys.argv[2]), Path(sys.argv[3]))
        sys.exit(0)
    sys.exit(standalone(run, __doc__))
