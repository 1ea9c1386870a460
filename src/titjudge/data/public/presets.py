"""Each public set's schema and protocol, as its dataset card documents them.

A preset names the columns it reads (a snapshot missing one is refused before anything is
written), the light columns a first pass reads to choose rows without image bytes, and how a
row becomes one human judgment of a pair: `pair_label` (from the light columns: the winner, or
why the row is dropped) and `pair_images` (the two images' bytes and models).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from titjudge.errors import DataError
from titjudge.records.items import Winner

Row = Mapping[str, Any]


class Dropped(Exception):
    """A row the set's schema does not allow (or does not judge): skipped and counted under
    its reason, or refused with `--strict`."""


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    #: the dataset card the schema is taken from
    card: str
    #: the hub dataset a snapshot of this set comes from
    repo: str
    licence: str
    default_split: str
    #: what a row is read for: the prompt, the label and the filters (no image bytes)
    light: tuple[str, ...]
    #: the image and model columns, read for the rows chosen
    heavy: tuple[str, ...]
    prompt: Callable[[Row], str]
    #: the row's winner ('a' = the first image), or Dropped with the reason
    pair_label: Callable[[Row], Winner]
    #: the two images' bytes and their T2I models
    pair_images: Callable[[Row], tuple[tuple[bytes, str], tuple[bytes, str]]]
    #: how the set's judgments become titjudge's pairs, in words (DATASET.md)
    protocol: str
    #: how titjudge's pairwise accuracy counts on this set, in one sentence (a run's report)
    accuracy: str = "pairwise accuracy over the decided pairs (human ties excluded)"
    #: whether the published numbers follow that protocol
    comparable: bool = False
    #: the numbers published on this set, as `name: value (source)` lines
    published: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return self.light + self.heavy


def _pickapic_label(row: Row) -> Winner:
    if row.get("has_label") is False:
        raise Dropped("no label (has_label false)")
    if row.get("are_different") is False:
        raise Dropped("the two images are the same (are_different false)")
    labels = (row.get("label_0"), row.get("label_1"))
    if not all(isinstance(v, (int, float)) and not math.isnan(v) for v in labels):
        raise Dropped("label_0/label_1 missing or not numbers")
    found = {(1.0, 0.0): "a", (0.0, 1.0): "b", (0.5, 0.5): "tie"}.get(
        (float(labels[0]), float(labels[1]))  # type: ignore[arg-type]
    )
    if found is None:
        raise Dropped("label_0/label_1 outside the schema's (1, 0), (0, 1), (0.5, 0.5)")
    return found  # type: ignore[return-value]


def _pickapic_images(row: Row) -> tuple[tuple[bytes, str], tuple[bytes, str]]:
    first, second = row.get("jpg_0"), row.get("jpg_1")
    if not isinstance(first, bytes) or not isinstance(second, bytes):
        raise Dropped("jpg_0/jpg_1 hold no image bytes")
    return (first, str(row.get("model_0") or "unknown")), (
        second,
        str(row.get("model_1") or "unknown"),
    )


def _caption(row: Row) -> str:
    value = row.get("caption")
    if not isinstance(value, str) or not value.strip():
        raise Dropped("empty caption")
    return value


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
    light=("caption", "label_0", "label_1", "has_label", "are_different"),
    heavy=("jpg_0", "jpg_1", "model_0", "model_1"),
    prompt=_caption,
    pair_label=_pickapic_label,
    pair_images=_pickapic_images,
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
        "when one of the two is a tie, else 0. titjudge does not compute that score yet, so its "
        "accuracy on this set is not the number PickScore's 70.5% is."
    ),
    published=(
        "PickScore: 70.5% (Kirstain et al. 2023, arXiv:2305.01569), by the tie-aware protocol "
        "above on test_unique",
        "HPSv3: 72.8% (as the issue that specified this preset quotes it; protocol not checked "
        "here)",
    ),
)

PRESETS: dict[str, Preset] = {preset.name: preset for preset in (PICKAPIC_V2,)}


def preset_named(name: str) -> Preset:
    """The preset called `name`, or a DataError listing those titjudge has."""
    found = PRESETS.get(name)
    if found is None:
        raise DataError(f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
    return found


__all__ = ["PICKAPIC_V2", "PRESETS", "Dropped", "Preset", "preset_named"]
