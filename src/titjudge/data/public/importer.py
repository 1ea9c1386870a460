"""`titjudge data import SOURCE --preset NAME --out DIR`: a public preference set as titjudge
data, in bounded memory.

Two passes over the split's shards. The first reads only the light columns (prompt, labels,
flags: no image bytes) and chooses the rows: valid labels, `--min-prompt-words`, and with
`--limit N` a uniform sample of N of them drawn with `--seed` (the same rows every time). The
second reads the chosen rows' images, decodes each once and writes it under `images/` named
by its sha256, so an image in several pairs is one file and one item, and a re-run skips the
images already there. manifest.jsonl, pairs.csv and DATASET.md are written last, each
atomically: an import that stops leaves no half-written file (only images a re-run reuses).

Prompt ids are the prompt text's digest (`p` + 12 hex), item ids the prompt id and the
image's digest, so both are the same in every import of the same data.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import random
import shutil
import sys
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from titjudge.data.manifest import manifest_line
from titjudge.data.public.judgments import Judgments, Tallied, key
from titjudge.data.public.presets import (
    Dropped,
    GroupRank,
    Label,
    Preset,
    Ranks,
    RatedImages,
    Rating,
)
from titjudge.data.public.sets import preset_named
from titjudge.data.public.shards import Shard, check_columns, iter_rows, split_shards
from titjudge.data.public.source import Snapshot, resolve_source
from titjudge.errors import DataError
from titjudge.files import atomic_write
from titjudge.records.items import Item
from titjudge.records.public_set import PublicSet


@dataclass(frozen=True)
class ImportOptions:
    split: str | None = None
    limit: int | None = None
    min_prompt_words: int | None = None
    seed: int = 0
    strict: bool = False


@dataclass
class ImportCounts:
    """What an import read, kept and dropped (DATASET.md's numbers)."""

    rows: int = 0
    chosen: int = 0
    short: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    images_written: int = 0
    images_present: int = 0
    items: int = 0
    prompts: int = 0
    tallied: Tallied = field(default_factory=Tallied)
    #: the rows imported are a `--limit` sample of the valid ones
    sampled: bool = False
    #: digests of the images this import has stored (written or found present)
    stored: set[int] = field(default_factory=set, repr=False)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    @property
    def pairs(self) -> int:
        return self.tallied.pairs

    @property
    def ties(self) -> int:
        return self.tallied.ties


def prompt_id_of(prompt: str) -> str:
    return "p" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]


def import_public(
    source: str,
    preset_name: str,
    out: Path,
    options: ImportOptions,
    say: Callable[[str], None] | None = None,
) -> ImportCounts:
    """Import `source` with preset `preset_name` into `out`; every refusal is one DataError
    raised before manifest.jsonl, pairs.csv or DATASET.md is written."""
    preset = preset_named(preset_name)
    snapshot = resolve_source(source)
    split = options.split or preset.default_split
    shards = split_shards(snapshot.folder, split, preset.files)
    check_columns(shards, preset.columns, preset.name)
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: exists and is not a folder")
    say = say or (lambda line: print(line, file=sys.stderr))
    counts = ImportCounts()
    chosen = _choose(shards, preset, options, counts)
    say(f"{preset.name} {split}: {counts.rows} rows, {counts.chosen} chosen; reading their images")
    staging = out / ".import"
    staging.mkdir(parents=True, exist_ok=True)
    judgments = Judgments(staging)
    try:
        target = _Target(out, staging, judgments, counts)
        with _bar(counts.chosen) as advance:
            _read_images(shards, preset, chosen, target, options, say, advance)
        if not counts.items:
            raise DataError(
                f"{source}: no row of split {split!r} could be imported ({_drops(counts)})"
            )
        counts.tallied = judgments.write(out)
        os.replace(staging / "manifest.jsonl", out / "manifest.jsonl")
        atomic_write(out / "DATASET.md", dataset_card(preset, snapshot, split, options, counts))
        PublicSet(
            preset=preset.name,
            title=preset.title,
            source=snapshot.source,
            repo=snapshot.repo,
            revision=snapshot.revision,
            split=split,
            accuracy=preset.accuracy,
            comparable=comparable(preset, counts),
            published=list(preset.published),
            measure=preset.measure,
        ).write(out)
    finally:
        judgments.close()
        shutil.rmtree(staging, ignore_errors=True)
    return counts


def _choose(
    shards: list[Shard], preset: Preset, options: ImportOptions, counts: ImportCounts
) -> array[int]:
    """The indexes (over the split's rows in shard order, ascending) of the rows to import."""
    valid = array("q")
    for shard in shards:
        for local, row in enumerate(iter_rows(shard, preset.light)):
            index = counts.rows
            counts.rows += 1
            try:
                prompt = preset.prompt(row)
                preset.label(row)
            except Dropped as why:
                if options.strict:
                    raise _refused(shard, local, index, why) from None
                counts.drop(str(why))
                continue
            if options.min_prompt_words and len(prompt.split()) < options.min_prompt_words:
                counts.short += 1
                continue
            valid.append(index)
    if options.limit is not None and options.limit < len(valid):
        picked = set(random.Random(options.seed).sample(range(len(valid)), options.limit))
        valid = array("q", (v for i, v in enumerate(valid) if i in picked))
        counts.sampled = True
    counts.chosen = len(valid)
    return valid


@dataclass(frozen=True)
class _Target:
    """Where an import writes: the output folder, its staging folder, the judgments tallied
    there and the counts kept."""

    out: Path
    staging: Path
    judgments: Judgments
    counts: ImportCounts


def _read_images(
    shards: list[Shard],
    preset: Preset,
    chosen: array[int],
    target: _Target,
    options: ImportOptions,
    say: Callable[[str], None],
    advance: Callable[[], None],
) -> None:
    """Every chosen row's images written once, its new items' manifest lines streamed to
    the staging folder, its label added to the judgments; `advance` after each chosen row."""
    out, counts, judgments = target.out, target.counts, target.judgments
    seen_items: set[int] = set()
    prompts: set[int] = set()
    index, next_chosen = -1, 0
    with (target.staging / "manifest.jsonl").open("w", encoding="utf-8") as manifest:
        for number, shard in enumerate(shards, 1):
            for local, row in enumerate(iter_rows(shard, preset.columns)):
                index += 1
                if next_chosen >= len(chosen) or chosen[next_chosen] != index:
                    continue
                next_chosen += 1
                advance()
                try:
                    prompt, label = preset.prompt(row), preset.label(row)
                    shown = preset.images(row, shard.root)
                    _check_count(label, len(shown))
                    found = [_item(data, model, prompt, out, counts) for data, model in shown]
                    if len({item.item_id for item in found}) < len(found):
                        raise Dropped("the same image bytes twice in one row")
                except Dropped as why:
                    if options.strict:
                        raise _refused(shard, local, index, why) from None
                    counts.drop(str(why))
                    continue
                for item in found:
                    if key(item.item_id) not in seen_items:
                        seen_items.add(key(item.item_id))
                        manifest.write(manifest_line(item, out) + "\n")
                prompts.add(key(found[0].prompt_id))
                judgments.add(label, found)
            say(f"  shard {number}/{len(shards)} read ({shard.path.name})")
    counts.items, counts.prompts = len(seen_items), len(prompts)


@contextlib.contextmanager
def _bar(total: int) -> Iterator[Callable[[], None]]:
    """A progress bar over the chosen rows on a terminal (rich, on stderr); elsewhere nothing
    (the shard lines say how far an import got)."""
    if not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("rows", total=total)
        yield lambda: bar.advance(task)


def _check_count(label: Label, images: int) -> None:
    """A label judges as many images as the row gives."""
    if isinstance(label, Ranks):
        wanted = len(label.ranks)
    elif isinstance(label, RatedImages):
        wanted = len(label.per_image)
    else:
        wanted = 1 if isinstance(label, (GroupRank, Rating)) else 2
    if images != wanted:
        raise Dropped(f"{images} images for a label on {wanted}")


def comparable(preset: Preset, counts: ImportCounts) -> bool:
    """Whether the published numbers follow titjudge's protocol on this import: the preset's
    word, unless votes were merged (several rows on the same two images are then one pair,
    where the set's own evaluation counts each row)."""
    return preset.comparable and not counts.tallied.merged


def _item(data: bytes, model: str, prompt: str, out: Path, counts: ImportCounts) -> Item:
    """The item of this image under this prompt, its file written once, by its digest."""
    digest = hashlib.sha256(data).hexdigest()
    prompt_id = prompt_id_of(prompt)
    path = _stored(data, digest, out, counts)
    return Item(f"{prompt_id}-{digest[:12]}", prompt_id, prompt, path, model)


#: an image file's first bytes, as the extension it is written with (PIL's formats)
MAGIC = (
    (b"\xff\xd8\xff", ".jpg"),
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"GIF8", ".gif"),
    (b"BM", ".bmp"),
)


def _extension(data: bytes) -> str:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return next((ext for magic, ext in MAGIC if data.startswith(magic)), ".img")


def _stored(data: bytes, digest: str, out: Path, counts: ImportCounts) -> Path:
    """The image's file, `images/<sha256>.<ext>`: written when it is not there yet, after its
    bytes decoded (a truncated or corrupt image is dropped)."""
    path = out / "images" / f"{digest}{_extension(data)}"
    if key(digest) in counts.stored:  # a second pair showing this image: stored already
        return path
    if _holds(path, digest):
        counts.images_present += 1
        counts.stored.add(key(digest))
        return path
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except (
        UnidentifiedImageError,
        Image.DecompressionBombError,
        OSError,
        SyntaxError,
        ValueError,
    ) as exc:
        raise Dropped(f"image bytes that do not decode ({type(exc).__name__})") from None
    _write_image(path, data)
    counts.images_written += 1
    counts.stored.add(key(digest))
    return path


def _holds(path: Path, digest: str) -> bool:
    """Whether `path` holds the image of this digest (a file a crash left torn does not)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == digest
    except OSError:
        return False


def _write_image(path: Path, data: bytes) -> None:
    """The image into its file by a rename, so no reader sees half of it. Not flushed to disk
    one by one (that would be most of an import's time): a file a crash leaves torn fails
    `_holds` on the re-run and is written again."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise DataError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _refused(shard: Shard, local: int, index: int, why: Dropped) -> DataError:
    """`--strict`'s refusal: the row by its place in its shard and in the split."""
    return DataError(f"{shard.path}: row {local} (row {index} of the split): {why} (--strict)")


def _drops(counts: ImportCounts) -> str:
    if not counts.dropped and not counts.short:
        return f"{counts.rows} rows read"
    parts = [f"{n} {why}" for why, n in counts.dropped.items()]
    if counts.short:
        parts.append(f"{counts.short} shorter than --min-prompt-words")
    return "; ".join(parts)


def _judged_lines(tallied: Tallied) -> list[str]:
    lines = []
    if tallied.ranked_items:
        lines.append(f"- ranks.csv: {tallied.ranked_items} ranked images")
    if tallied.regrouped_prompts:
        lines.append(
            f"- ranks.csv not written: {tallied.regrouped_prompts} prompts are ranked by more "
            "than one group (a run derives ranks from the pairs)"
        )
    if tallied.rated_items:
        lines.append(f"- ratings.csv: {tallied.rated_items} rated images")
    lines.append(f"- files: {', '.join(tallied.files)}")
    return lines


def dataset_card(
    preset: Preset, snapshot: Snapshot, split: str, options: ImportOptions, counts: ImportCounts
) -> str:
    """DATASET.md: where the data came from, what was kept and dropped and why, the protocol."""
    dropped = (
        "\n".join(f"- {n} rows: {why}" for why, n in sorted(counts.dropped.items())) or "- none"
    )
    chosen = (
        f"a uniform sample of the valid rows, --limit {options.limit} --seed {options.seed}"
        if counts.sampled
        else "every valid row"
    )
    lines = [
        f"# {preset.title} ({preset.name}), split {split}",
        "",
        f"- source: `{snapshot.source}`"
        + (f" (hub dataset {snapshot.repo})" if snapshot.repo else ""),
        f"- revision: {snapshot.revision or 'a local folder (no hub revision)'}",
        f"- schema: {preset.card}",
        f"- licence: {preset.licence}",
        "",
        "## Counts",
        "",
        f"- rows read: {counts.rows}",
        f"- rows imported: {counts.chosen} ({chosen})",
        f"- rows shorter than --min-prompt-words {options.min_prompt_words}: {counts.short}"
        if options.min_prompt_words
        else "- --min-prompt-words: not set",
        f"- pairs: {counts.pairs} ({counts.ties} ties); {counts.tallied.merged} further "
        "votes on a pair already voted on"
        + (
            " (so the published numbers, which count each row, are not comparable here)"
            if preset.comparable and counts.tallied.merged
            else ""
        ),
        *_judged_lines(counts.tallied),
        f"- items: {counts.items} over {counts.prompts} prompts",
        f"- images: {counts.images_written} written, {counts.images_present} already present",
        "",
        "## Dropped",
        "",
        dropped,
        "",
        "## Protocol",
        "",
        preset.protocol,
        "",
        "## Published numbers on this set",
        "",
        *(f"- {line}" for line in preset.published),
        "",
    ]
    return "\n".join(lines)


__all__ = ["ImportCounts", "ImportOptions", "dataset_card", "import_public", "prompt_id_of"]
