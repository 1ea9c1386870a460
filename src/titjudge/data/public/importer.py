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

import hashlib
import io
import random
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from titjudge.data.manifest import manifest_line
from titjudge.data.pairs import write_pairs
from titjudge.data.public.presets import Dropped, Preset, preset_named
from titjudge.data.public.shards import Shard, check_columns, iter_rows, split_shards
from titjudge.data.public.source import Snapshot, resolve_source
from titjudge.errors import DataError
from titjudge.files import atomic_write
from titjudge.records.items import HumanPair, Item, Winner

#: PIL's format names, as the extension an image file is written with
EXTENSIONS = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "GIF": ".gif", "BMP": ".bmp"}


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
    pairs: int = 0
    ties: int = 0
    merged_rows: int = 0
    #: the rows imported are a `--limit` sample of the valid ones
    sampled: bool = False
    #: digests of the images this import has stored (written or found present)
    stored: set[str] = field(default_factory=set, repr=False)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


@dataclass
class _Votes:
    prompt_id: str
    item_a: str
    item_b: str
    a: int = 0
    b: int = 0
    tie: int = 0

    def add(self, winner: Winner, flipped: bool) -> None:
        if winner == "tie":
            self.tie += 1
        elif (winner == "a") != flipped:
            self.a += 1
        else:
            self.b += 1

    @property
    def winner(self) -> Winner:
        return "a" if self.a > self.b else "b" if self.b > self.a else "tie"


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
    shards = split_shards(snapshot.folder, split)
    check_columns(shards, preset.columns, preset.name)
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: exists and is not a folder")
    say = say or (lambda line: print(line, file=sys.stderr))
    counts = ImportCounts()
    chosen = _choose(shards, preset, options, counts)
    say(f"{preset.name} {split}: {counts.rows} rows, {counts.chosen} chosen; reading their images")
    votes, lines = _read_images(shards, preset, chosen, out, options, counts, say)
    pairs = [HumanPair(v.prompt_id, v.item_a, v.item_b, v.winner) for v in votes.values()]
    counts.pairs, counts.ties = len(pairs), sum(p.winner == "tie" for p in pairs)
    if not pairs:
        raise DataError(f"{source}: no row of split {split!r} could be imported ({_drops(counts)})")
    atomic_write(out / "manifest.jsonl", "".join(line + "\n" for line in lines))
    write_pairs(pairs, out / "pairs.csv")
    atomic_write(out / "DATASET.md", dataset_card(preset, snapshot, split, options, counts))
    return counts


def _choose(
    shards: list[Shard], preset: Preset, options: ImportOptions, counts: ImportCounts
) -> set[int]:
    """The indexes (over the split's rows in shard order) of the rows to import."""
    valid = array("q")
    for shard in shards:
        for row in iter_rows(shard, preset.light):
            index = counts.rows
            counts.rows += 1
            try:
                prompt = preset.prompt(row)
                preset.pair_label(row)
            except Dropped as why:
                if options.strict:
                    raise DataError(f"{shard.path}: row {index}: {why} (--strict)") from None
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
    return set(valid)


def _read_images(
    shards: list[Shard],
    preset: Preset,
    chosen: set[int],
    out: Path,
    options: ImportOptions,
    counts: ImportCounts,
    say: Callable[[str], None],
) -> tuple[dict[tuple[str, str], _Votes], list[str]]:
    """Every chosen row's images written once, its items' manifest lines, its vote counted."""
    votes: dict[tuple[str, str], _Votes] = {}
    seen_items: set[str] = set()
    prompts: set[str] = set()
    lines: list[str] = []
    index = -1
    for number, shard in enumerate(shards, 1):
        for row in iter_rows(shard, preset.columns):
            index += 1
            if index not in chosen:
                continue
            try:
                prompt = preset.prompt(row)
                found = [
                    _item(data, model, prompt, out, counts)
                    for data, model in preset.pair_images(row)
                ]
                if found[0].item_id == found[1].item_id:
                    raise Dropped("the two images are the same bytes")
            except Dropped as why:
                if options.strict:
                    raise DataError(f"{shard.path}: row {index}: {why} (--strict)") from None
                counts.drop(str(why))
                continue
            for item in found:
                if item.item_id not in seen_items:
                    seen_items.add(item.item_id)
                    lines.append(manifest_line(item, out))
            ids = [item.item_id for item in found]
            prompt_id = found[0].prompt_id
            prompts.add(prompt_id)
            key = (min(ids), max(ids))
            if key not in votes:
                votes[key] = _Votes(prompt_id, ids[0], ids[1])
            else:
                counts.merged_rows += 1
            votes[key].add(preset.pair_label(row), flipped=ids[0] != votes[key].item_a)
        say(f"  shard {number}/{len(shards)} read ({shard.path.name})")
    counts.items, counts.prompts = len(seen_items), len(prompts)
    return votes, lines


def _item(data: bytes, model: str, prompt: str, out: Path, counts: ImportCounts) -> Item:
    """The item of this image under this prompt, its file written once, by its digest."""
    digest = hashlib.sha256(data).hexdigest()
    prompt_id = prompt_id_of(prompt)
    path = _stored(data, digest, out, counts)
    return Item(f"{prompt_id}-{digest[:12]}", prompt_id, prompt, path, model)


def _stored(data: bytes, digest: str, out: Path, counts: ImportCounts) -> Path:
    folder = out / "images"
    if digest in counts.stored:  # a second pair showing this image: stored already
        return next(folder.glob(f"{digest}.*"))
    present = next(iter(folder.glob(f"{digest}.*")), None) if folder.is_dir() else None
    if present is not None and present.stat().st_size == len(data):
        counts.images_present += 1
        counts.stored.add(digest)
        return present
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            kind = image.format or ""
            image.load()  # decoded once, here: a truncated or corrupt image is dropped
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise Dropped(f"image bytes that do not decode ({type(exc).__name__})") from None
    path = folder / f"{digest}{EXTENSIONS.get(kind, '.img')}"
    atomic_write(path, data)
    counts.images_written += 1
    counts.stored.add(digest)
    return path


def _drops(counts: ImportCounts) -> str:
    if not counts.dropped and not counts.short:
        return f"{counts.rows} rows read"
    parts = [f"{n} {why}" for why, n in counts.dropped.items()]
    if counts.short:
        parts.append(f"{counts.short} shorter than --min-prompt-words")
    return "; ".join(parts)


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
        f"- pairs: {counts.pairs} ({counts.ties} ties); {counts.merged_rows} rows were further "
        "votes on a pair already read",
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
