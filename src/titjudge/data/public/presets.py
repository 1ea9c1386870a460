"""What a public set's rows say, and the registry of the sets titjudge reads.

A preset names the columns it reads (a snapshot missing one is refused before anything is
written), the light columns a first pass reads to choose rows without image bytes, and how a
row becomes human judgments: `label` (from the light columns) says what the row judges, or
raises `Dropped` with the reason; `images` (from every column, and the snapshot's folder for
sets that keep images as files) gives the images the label is about, in its order.

A label is one of four shapes, as the sets publish them:

- a `Winner` (`'a'`, `'b'` or `'tie'`): one person's choice between the row's two images
  (Pick-a-Pic, HPDv3);
- `Ranks`: a ranking of the row's images, 1 = best (HPDv2's ranked groups);
- `GroupRank`: the row's one image's rank in a group several rows share (ImageRewardDB, one
  row per image);
- `Rating`: the row's one image's absolute ratings by its raters (EvalMuse-40K,
  LongT2IBench), their mean the mean opinion score;
- `RatedImages`: the ratings of each of the row's images (GenAI-Bench).

Each set's preset, with the card or repository its schema and protocol come from, lives in
`titjudge.data.public.sets`.
"""

from __future__ import annotations

import functools
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from titjudge.records.items import Winner

Row = Mapping[str, Any]


class Dropped(Exception):
    """A row the set's schema does not allow (or does not judge): skipped and counted under
    its reason, or refused with `--strict`."""


@dataclass(frozen=True)
class Ranks:
    """A ranking of the row's images, one rank per image in `images`' order; 1 = best,
    equal ranks a tie."""

    ranks: tuple[float, ...]


@dataclass(frozen=True)
class GroupRank:
    """The rank (1 = best) of the row's one image in the group `group` names; the rows of a
    group need not be next to each other."""

    group: str
    rank: float


@dataclass(frozen=True)
class Rating:
    """The ratings of the row's one image, one per rater, on the set's scale."""

    ratings: tuple[float, ...]


@dataclass(frozen=True)
class RatedImages:
    """The ratings of each of the row's images (in `images`' order), one per rater
    (GenAI-Bench: one row per prompt, each model's image rated by three people)."""

    per_image: tuple[tuple[float, ...], ...]


Label = Winner | Ranks | GroupRank | Rating | RatedImages
#: what the set's judgments are, which says what an import writes beside pairs.csv
Shape = Literal["pairs", "ranks", "ratings"]


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    #: the dataset card (or repository file) the schema is taken from
    card: str
    #: the hub dataset a snapshot of this set comes from
    repo: str
    licence: str
    default_split: str
    #: "pairs": pairwise choices; "ranks": rankings (pairs.csv and ranks.csv are written);
    #: "ratings": absolute ratings (ratings.csv, and the pairs and ranks they imply)
    shape: Shape
    #: what a row is read for: the prompt, the label and the filters (no image bytes)
    light: tuple[str, ...]
    #: the image and model columns, read for the rows chosen
    heavy: tuple[str, ...]
    prompt: Callable[[Row], str]
    label: Callable[[Row], Label]
    #: the row's images' bytes and T2I models, in the label's order (the snapshot's folder
    #: for a set whose images are files)
    images: Callable[[Row, Path], Sequence[tuple[bytes, str]]]
    #: how the set's judgments become titjudge's pairs, in words (DATASET.md)
    protocol: str
    #: how titjudge's pairwise accuracy counts on this set, in one sentence (a run's report)
    accuracy: str = "pairwise accuracy over the decided pairs (human ties excluded)"
    #: whether the published numbers follow that protocol
    comparable: bool = False
    #: the numbers published on this set, as `name: value (source)` lines
    published: tuple[str, ...] = ()
    #: the number the set's papers publish (`metrics.protocols`): "pairwise" (the accuracy
    #: is that number, or no other is computed), "inversion", "tie-aware", "ratings",
    #: "ratings-pairwise"
    measure: str = "pairwise"
    #: where the split's files are when the set does not name them by the hub's convention
    #: (`<split>-*.parquet`, `<split>.json`, ...): patterns under the snapshot, `{split}`
    #: standing for the split (ImageRewardDB's metadata-{split}.parquet)
    files: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return self.light + self.heavy


def text_field(row: Row, name: str) -> str:
    """A non-empty string column, or Dropped."""
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise Dropped(f"empty {name}")
    return value


def number(value: object) -> float | None:
    """`value` as a finite float; None for anything else (bool, NaN, text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    found = float(value)
    return found if found == found and abs(found) != float("inf") else None


def image_file(folder: Path, relative: object, under: str = "") -> bytes:
    """The bytes of an image a set keeps as a file: `relative` under `folder/under`, never
    outside the snapshot, or inside a zip archive of one of its folders as the hub ships them
    (`images/test/test_1.zip` holding `test_1/<uuid>.webp` or `<uuid>.webp` for
    `images/test/test_1/<uuid>.webp`); Dropped when it is in neither."""
    if not isinstance(relative, str) or not relative.strip():
        raise Dropped("no image path")
    root = folder.resolve()
    path = (root / under / relative).resolve()
    if not path.is_relative_to(root):
        raise Dropped("an image path outside the snapshot")
    try:
        return path.read_bytes()
    except OSError:
        pass
    found = _zipped(root, path.relative_to(root).parts)
    if found is None:
        raise Dropped(f"an image file that is not in the snapshot ({under or '.'}/...)")
    return found


def _zipped(root: Path, parts: tuple[str, ...]) -> bytes | None:
    """The file `parts` (relative to `root`) from the zip of the nearest folder above it
    that has one; None when no such archive holds it."""
    for depth in range(len(parts) - 1, 0, -1):
        archive = root.joinpath(*parts[: depth - 1], parts[depth - 1] + ".zip")
        if not archive.is_file():
            continue
        opened = _archive(archive)
        for member in ("/".join(parts[depth - 1 :]), "/".join(parts[depth:])):
            try:
                return opened.read(member)
            except KeyError:
                continue
    return None


@functools.lru_cache(maxsize=4)
def _archive(path: Path) -> zipfile.ZipFile:
    """An archive opened once for the images read from it (its index read once)."""
    try:
        return zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise Dropped(f"an image archive that does not open ({type(exc).__name__})") from None


__all__ = [
    "Dropped",
    "GroupRank",
    "Label",
    "Preset",
    "Rating",
    "Ranks",
    "RatedImages",
    "Row",
    "Shape",
    "image_file",
    "number",
    "text_field",
]
