"""Every public-set preset but Pick-a-Pic's (tests/data/test_public_pickapic.py): a small sample
in the set's documented schema (the writers in `doubles.public_sets` cite each card or
repository file), imported with `titjudge data import --preset`, judged by the lexical judge
on replayed descriptions, and its pairs, ties and the set's own protocol checked against
numbers worked out by hand below.

The lexical judge scores a description by the cosine of its content-word counts with the
prompt's. Every prompt here is distinct content words, and an image is "described" as the
first k of its prompt's n words, so its score is sqrt(k / n): the tests choose each image's
score by its k.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
import scipy.stats
from doubles import public_sets as sets
from doubles.public_sets import picture

from titjudge.cli import main
from titjudge.data.manifest import load_manifest
from titjudge.data.public.importer import ImportOptions, import_public, prompt_id_of
from titjudge.errors import DataError

#: seven content words each (no stopword), so a score is sqrt(k / 7)
P1 = "fox river stone moss dawn fog lantern"
P2 = "violin harbour crane ember glacier tulip anvil"
P3 = "orchid comet saddle quarry meadow beacon walrus"
COLOURS = [picture((23 * i % 256, 200 - 17 * i, 40 + 11 * i)) for i in range(16)]
A, B, C, D, E, F, G, H, Q, J = COLOURS[:10]


def imported(source: Path, preset: str, out: Path, **options: object):
    return import_public(str(source), preset, out, ImportOptions(**options), say=lambda _: None)  # type: ignore[arg-type]


def judged(out: Path, tmp: Path, words: dict[bytes, int], ranks: bool = False) -> dict:
    """Run the lexical judge over the imported set, each image described as the first k
    words of its prompt (`words`: image bytes -> k); metrics.json."""
    lines = []
    for item in load_manifest(out / "manifest.jsonl"):
        k = words[item.image.read_bytes()]
        description = " ".join(item.prompt.split()[:k]) if k else "zebra"
        lines.append(
            {"item_id": item.item_id, "image_sha256": item.image.stem, "description": description}
        )
    (out / "descriptions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    data = {"manifest": str(out / "manifest.jsonl"), "human_pairs": str(out / "pairs.csv")}
    if ranks:
        data["ranks"] = str(out / "ranks.csv")
    config = {
        "name": "public",
        "data": data,
        "describer": {"model": f"replay:{out / 'descriptions.jsonl'}"},
        "judges": [{"name": "lexical", "kind": "lexical"}],
        "run": {"out": str(tmp / "runs"), "cache_dir": str(tmp / "cache")},
    }
    path = tmp / "run.yaml"
    path.write_text(json.dumps(config))
    run = tmp / "run"
    assert main(["run", str(path), "--out", str(run)]) == 0
    return json.loads((run / "metrics.json").read_text())


def score(k: int, n: int = 7) -> float:
    return math.sqrt(k / n)


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def item_of(out: Path, prompt: str, data: bytes) -> str:
    import hashlib

    return f"{prompt_id_of(prompt)}-{hashlib.sha256(data).hexdigest()[:12]}"


def test_hpdv2_groups_become_pairs_and_the_run_gives_hpsv2s_inversion_score(tmp_path, capsys):
    groups = [
        (P1, [A, B, C, D], [1, 2, 2, 4]),  # B and C tied by people
        (P2, [E, F], [1, 2]),
        (P3, [G, H], [1]),  # one rank for two images: dropped
        (P3, [Q, J], [2, 1]),  # J's file is removed below: dropped
    ]
    source = sets.hpdv2(tmp_path / "snap", groups)
    (source / "test" / sets.name_of(J, ".jpg")).unlink()
    out = tmp_path / "set"
    counts = imported(source, "hpdv2", out)
    assert counts.dropped == {
        "rank is not one number per image_path": 1,
        "an image file that is not in the snapshot (test/...)": 1,
    }
    # C(4,2) + C(2,2) pairs, one of them the human tie B-C
    assert (counts.pairs, counts.ties) == (7, 1)
    ranks = {(r["item_id"], r["rank"]) for r in rows_of(out / "ranks.csv")}
    assert (item_of(out, P1, D), "4") in ranks and (item_of(out, P1, B), "2") in ranks
    # scores: A 1.0, B sqrt(1/7), C = D sqrt(4/7); E sqrt(5/7) > F sqrt(2/7)
    metrics = judged(out, tmp_path, {A: 7, B: 1, C: 4, D: 4, E: 5, F: 2}, ranks=True)
    lexical = metrics["variants"]["lexical"]
    # decided pairs: A>B, A>C, A>D right; B>D wrong (B scored lower); C>D a metric tie,
    # wrong; E>F right: 4 of 6
    assert (lexical["n_pairs"], lexical["n_correct"], lexical["n_human_ties"]) == (6, 4, 1)
    # HPSv2: group 1 has 1 discordant pair (B-D) and half of one (C-D, tied by the judge)
    # of 6: 1 - 1.5/6 = 0.75; group 2 has none: 1.0; the mean 0.875
    protocol = lexical["protocol"]
    assert protocol["measure"] == "inversion" and protocol["n"] == 2
    assert protocol["value"] == pytest.approx(0.875)
    assert metrics["dataset"]["measure"] == "inversion" and metrics["dataset"]["comparable"]
    shown = " ".join(capsys.readouterr().out.split())
    assert "The set's own number: mean per-prompt inversion score (HPSv2)" in shown
    assert "0.8750" in shown


def test_hpdv3_path1_wins_each_pair_and_a_missing_image_is_dropped(tmp_path):
    rows = [
        (P1, A, B, "flux", "sdxl"),
        (P2, C, D, "kolors", "flux"),
        (P3, None, E, "sdxl", "flux"),  # path1's file is not in the snapshot
    ]
    source, out = sets.hpdv3(tmp_path / "snap", rows), tmp_path / "set"
    counts = imported(source, "hpdv3", out)
    assert counts.dropped == {"an image file that is not in the snapshot (./...)": 1}
    models = {i.item_id: i.t2i_model for i in load_manifest(out / "manifest.jsonl")}
    assert models[item_of(out, P1, A)] == "flux" and models[item_of(out, P2, D)] == "flux"
    pairs = rows_of(out / "pairs.csv")
    winners = {
        (p["item_a"] if p["winner"] == "a" else p["item_b"]) for p in pairs if p["winner"] != "tie"
    }
    assert winners == {item_of(out, P1, A), item_of(out, P2, C)} and counts.ties == 0
    # A (k 7) over B (k 2): right; C (k 1) over D (k 5): wrong
    metrics = judged(out, tmp_path, {A: 7, B: 2, C: 1, D: 5})
    lexical = metrics["variants"]["lexical"]
    assert (lexical["n_pairs"], lexical["n_correct"]) == (2, 1)
    assert lexical["protocol"] is None  # the accuracy is HPSv3's own number
    assert metrics["dataset"]["comparable"] is True


def test_hpdv3_rows_merged_into_one_pair_are_not_comparable_with_its_per_row_accuracy(tmp_path):
    rows = [(P1, A, B, "flux", "sdxl"), (P1, B, A, "sdxl", "flux")]  # opposite choices: a tie
    source, out = sets.hpdv3(tmp_path / "snap", rows), tmp_path / "set"
    counts = imported(source, "hpdv3", out)
    assert (counts.pairs, counts.ties, counts.tallied.merged) == (1, 1, 1)
    assert json.loads((out / "dataset.json").read_text())["comparable"] is False
    assert "are not comparable here" in (out / "DATASET.md").read_text()


def test_imagerewarddb_rows_of_a_prompt_are_one_ranked_group_read_from_the_zip(tmp_path):
    rows = [
        ("q1", P1, A, 1),
        ("q2", P2, E, 2),  # the groups' rows interleaved
        ("q1", P1, B, 2),
        ("q1", P1, C, 2),  # B and C tied
        ("q2", P2, F, 1),
        ("q1", P1, D, 4),  # a gap in the ranks, as the card's test.json has
        ("q2", P2, G, 0),  # rank 0: outside the schema
    ]
    source, out = sets.imagerewarddb(tmp_path / "snap", rows), tmp_path / "set"
    assert not list(source.rglob("*.webp"))  # the images are only inside the archive
    counts = imported(source, "imagerewarddb", out)
    assert counts.dropped == {"rank is not a number of at least 1": 1}
    assert (counts.pairs, counts.ties, counts.items) == (7, 1, 6)
    # the same judge scores as the HPDv2 test: A 7, B 1, C 4, D 4; F (rank 1) k 5 > E k 2
    metrics = judged(out, tmp_path, {A: 7, B: 1, C: 4, D: 4, E: 2, F: 5}, ranks=True)
    lexical = metrics["variants"]["lexical"]
    # pooled, human ties out, a metric tie wrong (ImageReward's test.py acc()): 4 of 6
    assert (lexical["n_pairs"], lexical["n_correct"], lexical["metric_tie_rate"]) == (
        6,
        4,
        pytest.approx(1 / 6),
    )
    assert lexical["protocol"] is None and metrics["dataset"]["comparable"] is True


def test_evalmuse_scores_are_a_mean_opinion_score_and_the_run_correlates_them(tmp_path):
    rows = [
        ("e1", P1, "SDXL-Turbo/a.png", A, [5, 4]),  # MOS 4.5
        ("e1", P1, "DALLE3/b.png", B, [2, 3]),  # 2.5
        ("e1", P1, "SD3/c.png", C, [4, 4]),  # 4.0
        ("e2", P2, "SDXL-Turbo/d.png", D, [1, 2]),  # 1.5
        ("e2", P2, "DALLE3/e.png", E, [3, 3]),  # 3.0
        ("e2", P2, "SD3/f.png", F, [6, 2]),  # 6 is outside 1-5: dropped
        ("e3", P3, "SD3/g.png", G, []),  # no scores (test.json until released): dropped
    ]
    source, out = sets.evalmuse(tmp_path / "snap", rows), tmp_path / "set"
    counts = imported(source, "evalmuse", out)
    assert counts.dropped == {
        "total_score holds a rating outside 1-5": 1,
        "total_score is not a list of ratings": 1,
    }
    mos = {
        r["item_id"]: (float(r["mos"]), int(r["n_ratings"])) for r in rows_of(out / "ratings.csv")
    }
    assert mos[item_of(out, P1, A)] == (4.5, 2) and mos[item_of(out, P2, D)] == (1.5, 2)
    models = {i.item_id: i.t2i_model for i in load_manifest(out / "manifest.jsonl")}
    assert models[item_of(out, P1, B)] == "DALLE3"
    words = {A: 7, B: 1, C: 5, D: 2, E: 3}
    lexical = judged(out, tmp_path, words)["variants"]["lexical"]
    protocol = lexical["protocol"]
    # by MOS a > c > e > b > d; by score a > c > e > d > b: b and d swap places.
    # SRCC = 1 - 6 * (1 + 1) / (5 * 24) = 0.9; tau-b: 1 discordant of 10 pairs = 0.8
    assert protocol["measure"] == "ratings" and protocol["n"] == 5
    assert protocol["value"] == pytest.approx(0.9)
    assert protocol["values"]["krcc"] == pytest.approx(0.8)
    x = [score(words[d]) for d in (A, B, C, D, E)]
    y = [4.5, 2.5, 4.0, 1.5, 3.0]
    assert protocol["values"]["plcc"] == pytest.approx(scipy.stats.pearsonr(x, y)[0])
    # within prompts: a>c, a>b, c>b, e>d, all ordered right by the scores
    assert (lexical["n_pairs"], lexical["n_correct"]) == (4, 4)


def test_genai_bench_ratings_and_its_global_tie_calibrated_pairwise_accuracy(tmp_path):
    prompts = {
        "00000": (
            P1,
            {
                "DALLE_3": (A, [5, 5, 4]),
                "SDXL_Turbo": (B, [2, 3, 2]),
                "Midjourney_6": (C, [4, 4, 4]),
            },
        ),
        "00001": (
            P2,
            {
                "DALLE_3": (D, [3, 3, 3]),
                "SDXL_Turbo": (E, [3, 3, 3]),
                "Midjourney_6": (F, [1, 2, 1]),
            },
        ),
        "00002": (P3, {"DALLE_3": (G, [41, 3, 3]), "SDXL_Turbo": (H, [3, 3, 3])}),  # 41: dropped
    }
    source, out = sets.genai_bench(tmp_path / "snap", prompts), tmp_path / "set"
    counts = imported(source, "genai-bench", out)
    assert counts.dropped == {"models.DALLE_3 holds a rating outside 1-5": 1}
    assert counts.items == 6 and counts.ties == 1  # D and E: the same mean, 3.0
    models = {i.item_id: i.t2i_model for i in load_manifest(out / "manifest.jsonl")}
    assert models[item_of(out, P1, C)] == "Midjourney_6"
    words = {A: 7, B: 6, C: 5, D: 4, E: 4, F: 1}
    lexical = judged(out, tmp_path, words)["variants"]["lexical"]
    protocol = lexical["protocol"]
    # every two of the 6 images (15 pairs). By mean rating A 4.67 > C 4.0 > D = E 3.0 >
    # B 2.33 > F 1.33; by score A > B > C > D = E > F: B wrongly above C, D and E (3
    # pairs); D-E tied by both, right at threshold 0; 12 of 15 = 0.8, and a larger
    # threshold only turns right pairs into ties
    assert protocol["measure"] == "ratings-pairwise" and protocol["value"] == pytest.approx(0.8)
    assert protocol["values"]["tie_epsilon"] == 0.0 and protocol["values"]["n_pairs"] == 15
    x = [score(words[d]) for d in (A, B, C, D, E, F)]
    y = [14 / 3, 7 / 3, 4.0, 3.0, 3.0, 4 / 3]
    assert protocol["values"]["srcc"] == pytest.approx(scipy.stats.spearmanr(x, y)[0])
    assert protocol["values"]["krcc"] == pytest.approx(scipy.stats.kendalltau(x, y)[0])
    assert protocol["values"]["plcc"] == pytest.approx(scipy.stats.pearsonr(x, y)[0])
    # within prompts: A>C, A>B right, C>B wrong; D>F, E>F right; D-E a human tie: 4 of 5
    assert (lexical["n_pairs"], lexical["n_correct"], lexical["n_human_ties"]) == (5, 4, 1)


def test_longt2ibench_keeps_long_prompts_and_correlates_the_align_ratio(tmp_path):
    long = "fox river stone moss dawn fog lantern violin harbour crane ember glacier"  # 12
    rows = [
        (long, "imgs/sd35/1.png", A, 0.9),
        (long, "imgs/dalle3/1.png", B, 0.4),
        (long, "imgs/pixart/1.png", C, 0.6),
        (P2, "imgs/sd35/2.png", D, 0.2),  # 7 words: under --min-prompt-words 10
        (long, "imgs/flux/1.png", E, "high"),  # not a number: dropped
    ]
    source, out = sets.longt2ibench(tmp_path / "snap", rows), tmp_path / "set"
    counts = imported(source, "longt2ibench", out, min_prompt_words=10)
    assert counts.short == 1 and counts.dropped == {"Align ratio is not a number": 1}
    assert counts.items == 3 and counts.prompts == 1
    words = {A: 9, B: 5, C: 2}
    lexical = judged(out, tmp_path, words)["variants"]["lexical"]
    protocol = lexical["protocol"]
    # by Align ratio a > c > b, by score a > b > c: SRCC = 1 - 6 * 2 / (3 * 8) = 0.5
    assert protocol["value"] == pytest.approx(0.5) and protocol["n"] == 3
    x, y = [score(9, 12), score(5, 12), score(2, 12)], [0.9, 0.4, 0.6]
    assert protocol["values"]["plcc"] == pytest.approx(scipy.stats.pearsonr(x, y)[0])


def test_a_set_whose_files_are_not_there_names_what_it_looked_for(tmp_path):
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "train.json").write_text("[]")
    with pytest.raises(DataError, match=r"no shards of split 'test' \(looked for metadata-test"):
        imported(tmp_path / "snap", "imagerewarddb", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_ratings_set_without_its_ratings_file_is_one_line_before_the_run(tmp_path, capsys):
    rows = [("e1", P1, "SD3/a.png", A, [5]), ("e1", P1, "SD3/b.png", B, [2])]
    source, out = sets.evalmuse(tmp_path / "snap", rows), tmp_path / "set"
    imported(source, "evalmuse", out)
    (out / "ratings.csv").unlink()
    with pytest.raises(AssertionError):
        judged(out, tmp_path, {A: 7, B: 1})
    err = capsys.readouterr().err
    assert "ratings.csv: cannot read the set's ratings" in err and "Traceback" not in err


def test_the_datasets_pages_clip_judges_load_as_written(tmp_path):
    """docs/datasets.md's YAML block is a config's judges: it loads (models are not built)."""
    import re

    import yaml

    from titjudge.config.load import load_config

    page = (Path(__file__).resolve().parents[2] / "docs" / "datasets.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", page, re.S)
    assert block is not None
    config = {
        "name": "baselines",
        "describer": {"model": "replay:descriptions.jsonl"},
        **yaml.safe_load(block.group(1)),
    }
    path = tmp_path / "baselines.yaml"
    path.write_text(yaml.safe_dump(config))
    loaded = load_config(path)
    judges = {j.name: j for j in loaded.judges}
    assert {j.kind for j in judges.values()} == {"clip"}
    assert judges["clipscore"].score == "clipscore"
    assert judges["pickscore"].params["processor"] == "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
