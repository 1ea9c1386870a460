"""ImageRewardDB (Xu et al. 2023, ImageReward): one row per image, ranked within its prompt."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from titjudge.data.public.presets import (
    Dropped,
    GroupRank,
    Preset,
    Row,
    image_file,
    number,
    text_field,
)


def _label(row: Row) -> GroupRank:
    group = row.get("prompt_id")
    if not isinstance(group, (str, int)) or isinstance(group, bool) or str(group).strip() == "":
        raise Dropped("no prompt_id")
    rank = number(row.get("rank"))
    if rank is None or rank < 1:
        raise Dropped("rank is not a number of at least 1")
    return GroupRank(str(group), rank)


def _images(row: Row, folder: Path) -> Sequence[tuple[bytes, str]]:
    # the card names no generator per image (DiffusionDB's prompts and images): "unknown"
    return [(image_file(folder, row.get("image_path")), "unknown")]


IMAGEREWARDDB = Preset(
    name="imagerewarddb",
    title="ImageRewardDB",
    # the dataset card and its loading script ImageRewardDB.py: metadata-{split}.parquet at
    # the root (splits train, validation, test) with one row per image: image_path (relative
    # to the root), prompt_id, prompt, classification, image_amount_in_total, rank (1 = best,
    # ties and gaps allowed), overall_rating, image_text_alignment_rating, fidelity_rating;
    # the images are images/{split}/{split}_N.zip of <uuid>.webp, read from the archives
    # or unpacked beside them
    card="https://huggingface.co/datasets/THUDM/ImageRewardDB",
    repo="THUDM/ImageRewardDB",
    licence="Apache-2.0 (the dataset card)",
    default_split="test",
    shape="ranks",
    light=("prompt_id", "prompt", "rank"),
    heavy=("image_path",),
    prompt=lambda row: text_field(row, "prompt"),
    label=_label,
    images=_images,
    files=("metadata-{split}.parquet",),
    protocol=(
        "one row is one image of a prompt with its place in the prompt's ranking (`rank`, "
        "1 = best, equal ranks a tie). The rows of a prompt_id are one ranked group, written "
        "to ranks.csv; every two images of a group are one pair in pairs.csv, won by the "
        "better-ranked, a tie when their ranks are equal.\n\n"
        "ImageReward's own accuracy (github.com/THUDM/ImageReward, test.py acc()) pools every "
        "pair of every prompt, leaves a human tie out, and counts a model tie as wrong: that "
        "is titjudge's pairwise accuracy over the pairs both of whose images were scored."
    ),
    accuracy=(
        "pairwise accuracy over the decided pairs of every prompt, pooled, a metric tie wrong "
        "(as ImageReward's test.py), over the pairs both of whose images were scored"
    ),
    comparable=True,
    published=(
        "ImageReward: 65.14%, BLIP score: 57.76%, Aesthetic: 57.35%, CLIP score: 54.82% "
        "(Xu et al. 2023, arXiv:2304.05977, Table 3, on test)",
        "HPSv3: 66.8% (as the issue that specified this preset quotes it; protocol not "
        "checked here)",
    ),
)
