"""The state of an annotation session: its pairs, each annotator's order, and the votes file.

No web library here: the server (`titjudge.annotate.server`) calls these methods, and the
tests call them directly too.

Orders: each annotator sees every pair once, in an order and with left/right sides drawn by
a generator seeded with the session seed and the annotator's name (a queue, `ordered`: in the
order given, the sides still drawn), so the same name gets
the same order after a reload or a restart, and different names get different orders. The
next pair is the first in that order the annotator has not answered (a vote or a skip).

Votes are never lost: `answer` appends the row to VOTES, flushes it and fsyncs the file
before it returns, so the page hears back only about a vote that is on disk. One asyncio
lock orders every write of the process, so annotators voting at once from several browsers
append whole lines. `undo` takes back the annotator's last answer by rewriting the file
atomically without that row (titjudge.files.atomic_write). Starting on an existing VOTES
reads it back (validated as `data aggregate-votes` reads it), so everyone resumes where
they stopped. One server per VOTES file: two processes appending to one file would not
see each other's answers.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from titjudge.data.annotations import (
    AnnotationRow,
    Choice,
    Side,
    count_votes,
    csv_line,
    header_line,
    is_annotation_file,
    load_annotations,
)
from titjudge.data.pair_draw import PairToJudge
from titjudge.errors import DataError
from titjudge.files import atomic_write
from titjudge.records.items import Item

#: what the page sends: the side the annotator preferred, a tie, or a skip
Answer = Literal["left", "right", "tie", "skip"]
ANSWERS: tuple[Answer, ...] = ("left", "right", "tie", "skip")
MAX_NAME = 64
#: a time to answer above this (a day) is refused as nonsense
MAX_SECONDS = 86_400.0


class Refused(Exception):
    """A request the session will not carry out; `status` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def check_name(name: object) -> str:
    """An annotator name: text of 1 to 64 printable characters, stripped."""
    if not isinstance(name, str):
        raise Refused("annotator name must be text")
    name = name.strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise Refused(f"annotator name must be 1 to {MAX_NAME} printable characters")
    return name


@dataclass(frozen=True)
class Shown:
    """A pair as one annotator sees it: which item is on the left."""

    index: int
    pair: PairToJudge
    left: Side

    @property
    def left_item(self) -> str:
        return self.pair.item_a if self.left == "a" else self.pair.item_b

    @property
    def right_item(self) -> str:
        return self.pair.item_b if self.left == "a" else self.pair.item_a


class Session:
    """Pairs, orders and answers of one `titjudge annotate` server."""

    def __init__(
        self,
        items: Sequence[Item],
        pairs: Sequence[PairToJudge],
        votes: Path,
        seed: int = 0,
        ordered: bool = False,
    ):
        self.items = {item.item_id: item for item in items}
        self.pairs = list(pairs)
        self.votes_path = Path(votes)
        self.seed = seed
        #: every annotator sees the pairs in the given order (a queue: the workbench's,
        #: most disagreement first); sides are still drawn per annotator
        self.ordered = ordered
        self.index = {frozenset((p.item_a, p.item_b)): i for i, p in enumerate(self.pairs)}
        self.by_id = {p.pair_id: i for i, p in enumerate(self.pairs)}
        used = {i for p in self.pairs for i in (p.item_a, p.item_b)}
        #: the images the server may send, by number: /image/<n> (no path from a request)
        self.images = [self.items[i].image for i in self.items if i in used]
        self.image_number = {i: n for n, i in enumerate(x for x in self.items if x in used)}
        self.rows: list[AnnotationRow] = []
        self.answered: dict[str, dict[int, AnnotationRow]] = {}
        self.foreign = 0
        self._orders: dict[str, list[Shown]] = {}
        self._lock = asyncio.Lock()
        self._load()

    # ------------------------------------------------------------------ the file

    def _load(self) -> None:
        path = self.votes_path
        if path.is_dir():
            raise DataError(f"{path}: expected a votes file, found a folder")
        if not path.exists() or path.stat().st_size == 0:
            atomic_write(path, header_line())
            return
        if not is_annotation_file(path):
            raise DataError(
                f"{path}: not a votes file of `titjudge annotate` (no annotator and choice "
                "columns); give --out a new file"
            )
        located = load_annotations(path)
        count_votes(located, path, panel_size=None)  # one prompt per pair, or a DataError
        for _, row in located:
            self.rows.append(row)
            index = self.index.get(row.pair_key)
            if index is None:
                self.foreign += 1
            else:
                self.answered.setdefault(row.annotator, {})[index] = row
        with path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            last = handle.read(1)
        if last != b"\n":
            self._append("\n")

    def _append(self, text: str) -> None:
        with self.votes_path.open("a", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

    def _rewrite(self) -> None:
        atomic_write(
            self.votes_path, header_line() + "".join(csv_line(r.cells()) for r in self.rows)
        )

    # ------------------------------------------------------------------ orders

    def order(self, annotator: str) -> list[Shown]:
        """The annotator's pairs in their own order, each with its left side."""
        if annotator not in self._orders:
            rng = random.Random(f"{self.seed}\x00{annotator}")
            indices = list(range(len(self.pairs)))
            if not self.ordered:
                rng.shuffle(indices)
            self._orders[annotator] = [
                Shown(i, self.pairs[i], "a" if rng.random() < 0.5 else "b") for i in indices
            ]
        return self._orders[annotator]

    def next_pair(self, annotator: str) -> Shown | None:
        done = self.answered.get(annotator, {})
        return next((shown for shown in self.order(annotator) if shown.index not in done), None)

    def done(self, annotator: str) -> int:
        return len(self.answered.get(annotator, {}))

    def can_undo(self, annotator: str) -> bool:
        return bool(self.answered.get(annotator))

    # ------------------------------------------------------------------ answers

    async def answer(
        self, name: object, pair_id: object, answer: object, seconds: object
    ) -> AnnotationRow:
        """Record one answer on disk (appended, flushed, fsynced) and return its row."""
        annotator = check_name(name)
        if not isinstance(pair_id, str) or pair_id not in self.by_id:
            raise Refused("unknown pair")
        if answer not in ANSWERS:
            raise Refused(f"answer must be one of {', '.join(ANSWERS)}")
        took = _seconds(seconds)
        index = self.by_id[pair_id]
        shown = next(s for s in self.order(annotator) if s.index == index)
        pair = shown.pair
        choice: Choice
        if answer == "left":
            choice = shown.left
        elif answer == "right":
            choice = "b" if shown.left == "a" else "a"
        else:
            choice = "tie" if answer == "tie" else "skip"
        async with self._lock:
            if index in self.answered.get(annotator, {}):
                raise Refused("this pair is already answered; reload for the next one", 409)
            row = AnnotationRow(
                pair.prompt_id,
                pair.item_a,
                pair.item_b,
                annotator,
                choice,
                shown.left,
                took,
                datetime.now(timezone.utc).isoformat(timespec="seconds"),
            )
            try:
                await asyncio.to_thread(self._append, csv_line(row.cells()))
            except OSError as exc:
                raise DataError(
                    f"{self.votes_path}: cannot write ({exc.strerror or exc})"
                ) from None
            self.rows.append(row)
            self.answered.setdefault(annotator, {})[index] = row
        return row

    async def undo(self, name: object) -> AnnotationRow:
        """Take back the annotator's last answer (the file is rewritten atomically)."""
        annotator = check_name(name)
        async with self._lock:
            mine = self.answered.get(annotator, {})
            position = next(
                (
                    n
                    for n in range(len(self.rows) - 1, -1, -1)
                    if self.rows[n].annotator == annotator
                    and self.index.get(self.rows[n].pair_key) in mine
                ),
                None,
            )
            if position is None:
                raise Refused("nothing to undo", 409)
            row = self.rows.pop(position)
            try:
                await asyncio.to_thread(self._rewrite)
            except BaseException:
                self.rows.insert(position, row)
                raise
            del mine[self.index[row.pair_key]]
        return row


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Refused("seconds must be a number")
    seconds = float(value)
    if not (math.isfinite(seconds) and 0 <= seconds <= MAX_SECONDS):
        raise Refused(f"seconds must be between 0 and {MAX_SECONDS:g}")
    return seconds
