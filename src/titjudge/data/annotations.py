"""The per-annotator votes file `titjudge annotate` writes: one CSV row per annotator and pair.

Columns (docs: docs/annotation.md):

    prompt_id, item_a, item_b, annotator, choice, shown_left, seconds, voted_at

`choice` is `a`, `b` or `tie` in terms of item_a / item_b (not of the screen), or `skip`
(the annotator passed; not a vote, kept so a resumed session does not ask again);
`shown_left` is which of the two (`a` or `b`) the annotator saw on the left, so position
bias can be measured; `seconds` is the time from the pair appearing to the answer, and
`voted_at` the UTC time the server recorded it. `titjudge data aggregate-votes` reads this
file as well as the counts file (`votes_a, votes_b, votes_tie`): it counts each pair's
votes into one `Vote` row and applies the same rules (`titjudge.data.votes`).

Validation names `file:line`: a known choice and side, a non-empty annotator, two distinct
items, and at most one row per annotator and pair (an annotator voting a pair twice is an
error, not a second vote). A pair may appear with its items in either order; rows are
counted in the orientation of its first row (a `b` for `y, x` is an `a` for `x, y`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from titjudge.data.pairs import PanelSize, header_of, iter_csv
from titjudge.errors import DataError, where
from titjudge.records.items import Vote

Choice = Literal["a", "b", "tie", "skip"]
Side = Literal["a", "b"]
CHOICES: tuple[Choice, ...] = ("a", "b", "tie", "skip")
ANNOTATION_FIELDS = (
    "prompt_id",
    "item_a",
    "item_b",
    "annotator",
    "choice",
    "shown_left",
    "seconds",
    "voted_at",
)
#: the columns a file must have to be read as per-annotator votes
REQUIRED_FIELDS = ("prompt_id", "item_a", "item_b", "annotator", "choice")
_FLIP: dict[Choice, Choice] = {"a": "b", "b": "a", "tie": "tie", "skip": "skip"}


@dataclass(frozen=True)
class AnnotationRow:
    """One annotator's answer on one pair (a row of the votes file)."""

    prompt_id: str
    item_a: str
    item_b: str
    annotator: str
    choice: Choice
    shown_left: Side | None = None
    seconds: float | None = None
    voted_at: str = ""

    @property
    def pair_key(self) -> frozenset[str]:
        return frozenset((self.item_a, self.item_b))

    def cells(self) -> list[str]:
        """The row's CSV cells, in ANNOTATION_FIELDS order."""
        seconds = "" if self.seconds is None else f"{self.seconds:.3f}"
        return [
            self.prompt_id,
            self.item_a,
            self.item_b,
            self.annotator,
            self.choice,
            self.shown_left or "",
            seconds,
            self.voted_at,
        ]


def is_annotation_file(path: Path) -> bool:
    """Whether the CSV at `path` is per-annotator votes (has `annotator` and `choice`)."""
    header = header_of(Path(path), "votes file")
    return "annotator" in header and "choice" in header


def csv_line(cells: Sequence[str]) -> str:
    """One CSV line (Unix newline) with the csv module's quoting."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    return buffer.getvalue()


def header_line() -> str:
    return csv_line(ANNOTATION_FIELDS)


def _choice(value: str, loc: str) -> Choice:
    lowered = value.lower()
    if lowered not in CHOICES:
        raise DataError(f"{loc}: choice must be one of a, b, tie, skip; got {value!r}")
    return cast(Choice, lowered)


def _side(value: str, loc: str) -> Side | None:
    lowered = value.lower()
    if not lowered:
        return None
    if lowered not in ("a", "b"):
        raise DataError(f"{loc}: shown_left must be a or b (or empty), got {value!r}")
    return cast(Side, lowered)


def _seconds(value: str, loc: str) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        raise DataError(f"{loc}: seconds must be a number, got {value!r}") from None
    if not 0 <= seconds < float("inf"):
        raise DataError(f"{loc}: seconds must be a finite number >= 0, got {value!r}")
    return seconds


def load_annotations(path: Path) -> list[tuple[int, AnnotationRow]]:
    """Every row with its line number; the first problem is a DataError naming file:line."""
    path = Path(path)
    rows: list[tuple[int, AnnotationRow]] = []
    seen: dict[tuple[str, frozenset[str]], int] = {}
    for number, row in iter_csv(path, REQUIRED_FIELDS, "votes file"):
        loc = where(path, number)
        for key in REQUIRED_FIELDS:
            if not row[key]:
                raise DataError(f"{loc}: field '{key}' is empty")
        if row["item_a"] == row["item_b"]:
            raise DataError(f"{loc}: item_a and item_b are the same item {row['item_a']!r}")
        entry = AnnotationRow(
            row["prompt_id"],
            row["item_a"],
            row["item_b"],
            row["annotator"],
            _choice(row["choice"], loc),
            _side(row.get("shown_left", ""), loc),
            _seconds(row.get("seconds", ""), loc),
            row.get("voted_at", ""),
        )
        twice = (entry.annotator, entry.pair_key)
        if twice in seen:
            raise DataError(
                f"{loc}: annotator {entry.annotator!r} answered pair {entry.item_a!r} / "
                f"{entry.item_b!r} twice (first at line {seen[twice]})"
            )
        seen[twice] = number
        rows.append((number, entry))
    return rows


def oriented(row: AnnotationRow, item_a: str) -> Choice:
    """The row's choice for the pair oriented with `item_a` first."""
    return row.choice if row.item_a == item_a else _FLIP[row.choice]


@dataclass(frozen=True)
class CountedVotes:
    """Per-annotator rows counted into vote rows (line = the pair's first row)."""

    votes: list[tuple[int, Vote]]
    skips: int
    annotators: int


def count_votes(
    located: Iterable[tuple[int, AnnotationRow]], path: Path, panel_size: PanelSize = "same"
) -> CountedVotes:
    """Count each pair's a / b / tie rows into one `Vote` (skips are not votes; a pair with
    only skips has no row). Panel sizes as `load_votes_with_lines`: "same" (every pair counts as many
    votes as the first), an int (exactly that many), None (any)."""
    first: dict[frozenset[str], tuple[int, AnnotationRow]] = {}
    counts: dict[frozenset[str], dict[Choice, int]] = {}
    skips = 0
    annotators: set[str] = set()
    for number, row in located:
        annotators.add(row.annotator)
        if row.choice == "skip":
            skips += 1
            continue
        key = row.pair_key
        if key not in first:
            first[key] = (number, row)
            counts[key] = {"a": 0, "b": 0, "tie": 0}
        head = first[key][1]
        if row.prompt_id != head.prompt_id:
            raise DataError(
                f"{where(path, number)}: pair {row.item_a!r} / {row.item_b!r} is under prompt "
                f"{row.prompt_id!r} here and {head.prompt_id!r} at line {first[key][0]}"
            )
        counts[key][oriented(row, head.item_a)] += 1
    votes: list[tuple[int, Vote]] = []
    expected = panel_size if isinstance(panel_size, int) else None
    expected_from = "--panel-size"
    for key, (number, head) in first.items():
        c = counts[key]
        vote = Vote(head.prompt_id, head.item_a, head.item_b, c["a"], c["b"], c["tie"])
        if expected is None and panel_size == "same":
            expected, expected_from = vote.total, f"the pair at line {number}"
        if expected is not None and vote.total != expected:
            raise DataError(
                f"{where(path, number)}: pair {head.item_a!r} / {head.item_b!r} has "
                f"{vote.total} vote(s) but the panel has {expected} (set by {expected_from}); "
                "every pair must count the same panel (--panel-size any lets each pair's own "
                "votes set its thresholds)"
            )
        votes.append((number, vote))
    return CountedVotes(votes, skips, len(annotators))
