"""HPDv2 (Wu et al. 2023, HPSv2) and HPDv3 (Ma et al. 2025, HPSv3): annotations in JSON,
images as files of the snapshot (the hub ships them as tar archives to unpack beside the JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from titjudge.data.public.presets import (
    Dropped,
    Preset,
    Ranks,
    Row,
    image_file,
    number,
    text_field,
)
from titjudge.records.items import Winner


def _hpdv2_paths(row: Row) -> list[str]:
    paths = row.get("image_path")
    if not isinstance(paths, list) or len(paths) < 2:
        raise Dropped("image_path is not a list of at least two file names")
    if not all(isinstance(p, str) and p.strip() for p in paths):
        raise Dropped("image_path holds an empty or non-text file name")
    return paths


def _hpdv2_label(row: Row) -> Ranks:
    paths = _hpdv2_paths(row)
    ranks = row.get("rank")
    if not isinstance(ranks, list) or len(ranks) != len(paths):
        raise Dropped("rank is not one number per image_path")
    found = tuple(number(r) for r in ranks)
    if any(r is None or r < 0 for r in found):
        raise Dropped("rank holds a value that is not a non-negative number")
    return Ranks(found)  # type: ignore[arg-type]


def _hpdv2_images(row: Row, folder: Path) -> Sequence[tuple[bytes, str]]:
    # the documented schema names no generator per image: the items' t2i_model is "unknown"
    return [(image_file(folder, path, "test"), "unknown") for path in _hpdv2_paths(row)]


HPDV2 = Preset(
    name="hpdv2",
    title="HPDv2 (Human Preference Dataset v2)",
    # test.json: a JSON array of {prompt, image_path: [file names], rank: [one per image],
    # raw_annotations: [{rank, user_hash}]}; the images are test.tar.gz unpacked as test/
    # (the dataset's loader HPDv2.py: splits train and test, each {split}.json beside
    # {split}.tar.gz; hpsv2/evaluation.py opens os.path.join(image_folder, image_path[i]))
    card="https://huggingface.co/datasets/ymhao/HPDv2",
    repo="ymhao/HPDv2",
    licence="Apache-2.0 (the dataset card)",
    default_split="test",
    shape="ranks",
    light=("prompt", "image_path", "rank"),
    heavy=(),
    prompt=lambda row: text_field(row, "prompt"),
    label=_hpdv2_label,
    images=_hpdv2_images,
    protocol=(
        "one row is one prompt's group of images, ranked by annotators: `rank` gives each "
        "image its place, the smaller the better (hpsv2/evaluation.py turns the model's "
        "scores into places by argsort(-score) and counts disagreements with `rank`). The "
        "ranking is written to ranks.csv, and every two images of a group are one pair in "
        "pairs.csv, won by the better-ranked (a tie when their ranks are equal).\n\n"
        "HPSv2's own number (github.com/tgxs002/HPSv2, hpsv2/evaluation.py evaluate_rank and "
        "hpsv2/src/training/train.py inversion_score) is the mean over prompts of "
        "1 - discordant pairs / (n(n-1)/2), a tie in `rank` never discordant and the model's "
        "order strict; titjudge's pairwise accuracy pools the pairs of every prompt and leaves "
        "human ties out, so it is not that number. A run computes HPSv2's number too (each "
        "variant's `protocol` block, from ranks.csv when the config names it as data.ranks): "
        "two images the judge scores equally and people do not count half discordant, HPSv2's "
        "number in expectation over the arbitrary order its argsort gives tied scores."
    ),
    accuracy=(
        "pairwise accuracy over the decided pairs of every ranked group, pooled (HPSv2 "
        "reports the mean per-prompt inversion score instead)"
    ),
    measure="inversion",
    comparable=True,
    published=(
        "HPSv2: 83.3%, PickScore: 79.8%, ImageReward: 74.0%, HPS: 77.6%, Aesthetic: 76.8%, "
        "a single human annotator: 78.1% (tgxs002/HPSv2 README; mean inversion score on test)",
        "HPSv2.1: 84.1% (tgxs002/HPSv2 README)",
        "HPSv3: 85.4%, CLIP ViT-H/14: 65.1% (MizzenAI/HPSv3 README; protocol not reproducible "
        "from its evaluate.py)",
    ),
)


def _hpdv3_label(_row: Row) -> Winner:
    # "For simplicity, path1's image is always the prefered one" (the dataset card)
    return "a"


def _hpdv3_images(row: Row, folder: Path) -> Sequence[tuple[bytes, str]]:
    shown = []
    for path, model in (("path1", "model1"), ("path2", "model2")):
        data = image_file(folder, text_field(row, path))
        shown.append((data, str(row.get(model) or "unknown")))
    return shown


def _hpdv3_prompt(row: Row) -> str:
    for path in ("path1", "path2"):
        text_field(row, path)  # a row without its two paths is dropped in the first pass
    return text_field(row, "prompt")


HPDV3 = Preset(
    name="hpdv3",
    title="HPDv3",
    # test.json (and train.json, all.json): a JSON array of {prompt, path1, path2, model1,
    # model2} (train/all add choice_dist and confidence), path1 always the preferred image,
    # paths relative to the dataset root ("images/uuid1.jpg"); the images are
    # images.tar.gz.00-.12 unpacked there (`cat images.tar.gz.* | gunzip | tar -xv`)
    card="https://huggingface.co/datasets/MizzenAI/HPDv3",
    repo="MizzenAI/HPDv3",
    licence="MIT (the dataset card)",
    default_split="test",
    shape="pairs",
    light=("prompt", "path1", "path2"),
    heavy=("model1", "model2"),
    prompt=_hpdv3_prompt,
    label=_hpdv3_label,
    images=_hpdv3_images,
    protocol=(
        "one row is one pair of images of a prompt, `path1` the one annotators preferred (the "
        "card: 'path1's image is always the prefered one'); no row is a tie. Several rows on "
        "the same two images are one pair won by the image more rows prefer. A row whose image "
        "file is not in the snapshot is dropped and counted (github.com/MizzenAI/HPSv3 issue "
        "21 reports test images missing from the archives).\n\n"
        "HPSv3's own accuracy (MizzenAI/HPSv3, evaluate/evaluate.py, pairwise mode) counts "
        "every test pair, correct when path1 scores strictly higher, a tied score wrong: "
        "titjudge's pairwise accuracy is that number over the pairs both of whose images were "
        "scored (a pair with a failed item is skipped and counted)."
    ),
    accuracy=(
        "pairwise accuracy: path1 scored strictly higher, a metric tie wrong (as HPSv3's "
        "evaluate.py), over the pairs both of whose images were scored"
    ),
    comparable=True,
    published=(
        "HPSv3: 76.9%, PickScore: 65.6%, HPSv2: 65.3%, CLIP: 48.6% (MizzenAI/HPSv3 README "
        "and arXiv:2508.03789, on test)",
    ),
)
