"""Pick-a-Pic v2 (Kirstain et al. 2023): one row, one user's choice between two images."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from titjudge.data.public.presets import Dropped, Preset, Row, number, text_field
from titjudge.records.items import Winner


def _label(row: Row) -> Winner:
    if row.get("has_label") is False:
        raise Dropped("no label (has_label false)")
    if row.get("are_different") is False:
        raise Dropped("the two images are the same (are_different false)")
    labels = (number(row.get("label_0")), number(row.get("label_1")))
    if labels[0] is None or labels[1] is None:
        raise Dropped("label_0/label_1 missing or not numbers")
    found = {(1.0, 0.0): "a", (0.0, 1.0): "b", (0.5, 0.5): "tie"}.get(labels)  # type: ignore[arg-type]
    if found is None:
        raise Dropped("label_0/label_1 outside the schema's (1, 0), (0, 1), (0.5, 0.5)")
    return found  # type: ignore[return-value]


def _images(row: Row, _folder: Path) -> Sequence[tuple[bytes, str]]:
    first, second = row.get("jpg_0"), row.get("jpg_1")
    if not isinstance(first, bytes) or not isinstance(second, bytes):
        raise Dropped("jpg_0/jpg_1 hold no image bytes")
    return [
        (first, str(row.get("model_0") or "unknown")),
        (second, str(row.get("model_1") or "unknown")),
    ]


PICKAPIC_V2 = Preset(
    name="pickapic-v2",
    title="Pick-a-Pic v2",
    # features and splits: the dataset card's dataset_info (train 959,040 rows; validation
    # 20,596; test 20,716; validation_unique and test_unique 500 each); jpg_0 / jpg_1 hold the
    # image bytes, label_0 / label_1 the user's preference (1/0, 0/1, or 0.5/0.5 for a tie)
    card="https://huggingface.co/datasets/yuvalkirstain/pickapic_v2",
    repo="yuvalkirstain/pickapic_v2",
    licence="as the dataset card states it (not checked here)",
    default_split="test_unique",
    shape="pairs",
    light=("caption", "label_0", "label_1", "has_label", "are_different"),
    heavy=("jpg_0", "jpg_1", "model_0", "model_1"),
    prompt=lambda row: text_field(row, "caption"),
    label=_label,
    images=_images,
    protocol=(
        "one row is one user's choice between two images of one caption: label (1, 0) is a win "
        "for image 0, (0, 1) for image 1, (0.5, 0.5) a tie. A tie is kept as a tie in pairs.csv. "
        "Several rows on the same two images (several users) are one pair whose winner is the "
        "image more users chose (a tie when as many chose each).\n\n"
        "titjudge's pairwise accuracy counts decided pairs only (ties inform win rates and the "
        "tie rate, never accuracy). PickScore's own protocol is not that "
        "(github.com/yuvalkirstain/PickScore, trainer/scripts/eval_preference_predictor.py): "
        "every test_unique example counts, ties included; a model predicts a tie when its two "
        "images' softmax probabilities differ by at most a threshold chosen on "
        "validation_unique (0, 0.1, ... 1); a prediction scores 1 when it equals the label, 0.5 "
        "when one of the two is a tie, else 0. A run computes that score too (each variant's "
        "`protocol` block): at threshold 0 (a tie predicted only for equal scores) and at the "
        "best threshold on the run's own pairs, on score differences (a judge's scores are not "
        "PickScore's softmax probabilities); the second is chosen on the pairs it is scored "
        "on, so neither is the number PickScore's 70.5% is."
    ),
    measure="tie-aware",
    published=(
        "PickScore: 70.5% (Kirstain et al. 2023, arXiv:2305.01569), by the tie-aware protocol "
        "above on test_unique",
        "HPSv3: 72.8% (as the issue that specified this preset quotes it; protocol not checked "
        "here)",
    ),
)
