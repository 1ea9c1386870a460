"""CSV files of human judgments: pairs, ranks and raw votes (formats in docs/method.md, "Files").

Every loader validates as it reads and names `file:line` in its one-line error, so a
user can fix a bad row without reading a traceback. Extra columns are ignored (they
may carry annotations); missing columns are errors. Values are whitespace-stripped,
and `winner` / expert verdicts are case-insensitive.

Votes and panel size: by default (`panel_size="same"`) every row must count the same
number of annotators, taken from the first row, because a changing panel silently
changes what "10 of 15" means. Pass an int to require that exact size, or `None` for
a flexible panel where each row's thresholds derive from its own total.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal, cast

from titjudge.errors import DataError, did_you_mean, where, whole_number
from titjudge.files import atomic_open, read_text
from titjudge.records.items import HumanPair, Item, RankRow, Vote, Winner

PAIR_FIELDS = ("prompt_id", "item_a", "item_b", "winner")
#: optional columns of a pairs file: the judgements that decided each pair
PAIR_VOTE_FIELDS = ("votes_a", "votes_b", "votes_tie")
RANK_FIELDS = ("prompt_id", "item_id", "rank")
VOTE_FIELDS = ("prompt_id", "item_a", "item_b", "votes_a", "votes_b", "votes_tie")
EXPERT_FIELDS = ("expert_1", "expert_2", "expert_3")
WINNERS: tuple[Winner, ...] = ("a", "b", "tie")

PanelSize = int | None | Literal["same"]


# --------------------------------------------------------------------------- CSV plumbing


def iter_csv(
    path: Path, required: Sequence[str], what: str
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) with stripped values; header and row-shape errors name file:line."""
    text = read_text(path, what)
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip() for cell in row]
            missing = [name for name in required if name not in header]
            if missing:
                raise DataError(
                    f"{where(path, reader.line_num)}: missing column(s) {', '.join(missing)} "
                    f"(header has: {', '.join(header)})"
                )
            dupes = sorted({name for name in header if header.count(name) > 1})
            if dupes:
                raise DataError(
                    f"{where(path, reader.line_num)}: repeated column(s) {', '.join(dupes)}"
                )
            continue
        if len(row) != len(header):
            raise DataError(
                f"{where(path, reader.line_num)}: expected {len(header)} fields as in the header, got {len(row)}"
            )
        yield reader.line_num, {name: cell.strip() for name, cell in zip(header, row, strict=True)}
    if header is None:
        raise DataError(f"{path}: {what} is empty (expected a header: {','.join(required)})")


def header_of(path: Path, what: str) -> list[str]:
    """The stripped header of a CSV file ([] when empty); for optional-column checks."""
    for row in csv.reader(io.StringIO(read_text(path, what), newline="")):
        if any(cell.strip() for cell in row):
            return [cell.strip() for cell in row]
    return []


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Write a CSV with Unix newlines atomically, creating the folder."""
    with atomic_open(path) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def _nonempty(row: dict[str, str], key: str, loc: str) -> str:
    if not row[key]:
        raise DataError(f"{loc}: field '{key}' is empty")
    return row[key]


def parse_winner(value: str, field: str, loc: str) -> Winner:
    """`a`, `b` or `tie` (any case) or a DataError."""
    lowered = value.lower()
    if lowered not in WINNERS:
        raise DataError(f"{loc}: {field} must be one of a, b, tie; got {value!r}")
    return cast(Winner, lowered)


def check_pair_ids(
    item_a: str, item_b: str, path: Path, number: int, seen: dict[frozenset[str], int]
) -> None:
    """Two distinct items, and each unordered pair at most once per file."""
    loc = where(path, number)
    if item_a == item_b:
        raise DataError(f"{loc}: item_a and item_b are the same item {item_a!r}")
    key = frozenset((item_a, item_b))
    if key in seen:
        raise DataError(
            f"{loc}: pair {item_a!r} / {item_b!r} appears twice (first at line {seen[key]})"
        )
    seen[key] = number


# --------------------------------------------------------------------------- pairs


def load_pairs(path: Path, items: Mapping[str, Item] | None = None) -> list[HumanPair]:
    """Load human pairs. With `items`, both ids must exist and belong to the row's prompt."""
    path = Path(path)
    pairs: list[HumanPair] = []
    seen: dict[frozenset[str], int] = {}
    for number, row in iter_csv(path, PAIR_FIELDS, "pairs file"):
        loc = where(path, number)
        prompt_id, item_a, item_b = (_nonempty(row, key, loc) for key in PAIR_FIELDS[:3])
        winner = parse_winner(row["winner"], "winner", loc)
        check_pair_ids(item_a, item_b, path, number, seen)
        if items is not None:
            check_pair_items(prompt_id, item_a, item_b, items, loc)
        pairs.append(HumanPair(prompt_id, item_a, item_b, winner, _pair_votes(row, loc)))
    return pairs


def _pair_votes(row: dict[str, str], loc: str) -> tuple[int, int, int] | None:
    """A pairs row's votes_a / votes_b / votes_tie, where its file has all three and the row
    fills them (all or none: a row with some is a DataError)."""
    cells = [row.get(key) for key in PAIR_VOTE_FIELDS]
    if any(cell is None for cell in cells) or not any(cells):
        return None
    if not all(cells):
        raise DataError(f"{loc}: votes_a, votes_b and votes_tie are filled together or not at all")
    a, b, tie = (_count(row, key, loc) for key in PAIR_VOTE_FIELDS)
    return a, b, tie


def check_pair_items(
    prompt_id: str, item_a: str, item_b: str, items: Mapping[str, Item], loc: str
) -> None:
    """Both items exist in the manifest and belong to `prompt_id`."""
    for item_id in (item_a, item_b):
        item = items.get(item_id)
        if item is None:
            raise DataError(
                f"{loc}: unknown item {item_id!r} (not in the manifest){did_you_mean(item_id, items)}"
            )
        if item.prompt_id != prompt_id:
            raise DataError(
                f"{loc}: item {item_id!r} belongs to prompt {item.prompt_id!r}, not {prompt_id!r}; "
                "pairs must compare images of the same prompt"
            )


def check_pairs_known(
    pairs: Sequence[HumanPair], known: Collection[str], path: Path, source: str, shown: int = 3
) -> None:
    """Every item the pairs name is in `known` (the ids of `source`); otherwise one DataError
    with the count of such pairs and items, naming the first `shown` ids in file order."""
    missing: dict[str, None] = {}
    bad_pairs = 0
    for pair in pairs:
        absent = [i for i in (pair.item_a, pair.item_b) if i not in known]
        bad_pairs += bool(absent)
        missing.update(dict.fromkeys(absent))
    if not missing:
        return
    names = ", ".join(repr(i) for i in list(missing)[:shown])
    more = f" and {len(missing) - shown} more" if len(missing) > shown else ""
    raise DataError(
        f"{path}: {bad_pairs} of {len(pairs)} pairs name items not in {source}: "
        f"{len(missing)} unknown item(s), {names}{more}"
    )


def write_pairs(pairs: Iterable[HumanPair], path: Path) -> None:
    """A pairs file; with votes_a / votes_b / votes_tie where any pair carries its votes."""
    pairs = list(pairs)
    if not any(p.votes is not None for p in pairs):
        write_csv(path, PAIR_FIELDS, ((p.prompt_id, p.item_a, p.item_b, p.winner) for p in pairs))
        return
    write_csv(
        path,
        PAIR_FIELDS + PAIR_VOTE_FIELDS,
        ((p.prompt_id, p.item_a, p.item_b, p.winner, *(p.votes or ("", "", ""))) for p in pairs),
    )


# --------------------------------------------------------------------------- ranks


def load_ranks(path: Path) -> list[RankRow]:
    """Load ranks (1 = best; ties share a, possibly fractional, rank)."""
    path = Path(path)
    rows: list[RankRow] = []
    seen: dict[tuple[str, str], int] = {}
    for number, row in iter_csv(path, RANK_FIELDS, "ranks file"):
        loc = where(path, number)
        prompt_id, item_id = _nonempty(row, "prompt_id", loc), _nonempty(row, "item_id", loc)
        try:
            rank = float(row["rank"])
        except ValueError:
            raise DataError(f"{loc}: rank must be a number, got {row['rank']!r}") from None
        if not rank >= 1:  # also rejects NaN
            raise DataError(f"{loc}: rank must be >= 1 (1 = best), got {row['rank']!r}")
        key = (prompt_id, item_id)
        if key in seen:
            raise DataError(
                f"{loc}: item {item_id!r} ranked twice for prompt {prompt_id!r} (first at line {seen[key]})"
            )
        seen[key] = number
        rows.append(RankRow(prompt_id, item_id, rank))
    return rows


def format_rank(rank: float) -> str:
    """`3` for whole ranks, `3.5` for shared ones."""
    return f"{rank:g}"


def write_ranks(rows: Iterable[RankRow], path: Path) -> None:
    write_csv(path, RANK_FIELDS, ((r.prompt_id, r.item_id, format_rank(r.rank)) for r in rows))


# --------------------------------------------------------------------------- votes


def _count(row: dict[str, str], key: str, loc: str) -> int:
    return whole_number(row[key], f"{loc}: {key}")


def load_votes_with_lines(path: Path, panel_size: PanelSize = "same") -> list[tuple[int, Vote]]:
    """Annotator votes with each row's line number (for reports); see the module docstring for
    the panel-size modes."""
    path = Path(path)
    has_experts = [name for name in EXPERT_FIELDS if name in header_of(path, "votes file")]
    if has_experts and len(has_experts) != len(EXPERT_FIELDS):
        absent = [name for name in EXPERT_FIELDS if name not in has_experts]
        raise DataError(
            f"{path}:1: expert columns must be all of expert_1..expert_3; missing {', '.join(absent)}"
        )
    expected = panel_size if isinstance(panel_size, int) else None
    expected_from = "--panel-size"
    out: list[tuple[int, Vote]] = []
    seen: dict[frozenset[str], int] = {}
    for number, row in iter_csv(path, VOTE_FIELDS, "votes file"):
        loc = where(path, number)
        prompt_id, item_a, item_b = (_nonempty(row, key, loc) for key in VOTE_FIELDS[:3])
        check_pair_ids(item_a, item_b, path, number, seen)
        votes_a, votes_b, votes_tie = (_count(row, key, loc) for key in VOTE_FIELDS[3:])
        total = votes_a + votes_b + votes_tie
        if total == 0:
            raise DataError(f"{loc}: no votes (votes_a + votes_b + votes_tie = 0)")
        if expected is None and panel_size == "same":
            expected, expected_from = total, f"line {number}"
        if expected is not None and total != expected:
            raise DataError(
                f"{loc}: votes add up to {total} but the panel has {expected} annotators "
                f"(set by {expected_from}); every row must count the same panel"
            )
        experts: tuple[Winner, ...] = ()
        if has_experts:
            given = [row[name] for name in EXPERT_FIELDS]
            if any(given) and not all(given):
                raise DataError(
                    f"{loc}: expert verdicts must be all filled or all empty, got {given}"
                )
            if all(given):
                experts = tuple(
                    parse_winner(v, name, loc) for v, name in zip(given, EXPERT_FIELDS, strict=True)
                )
        out.append((number, Vote(prompt_id, item_a, item_b, votes_a, votes_b, votes_tie, experts)))
    return out


def write_votes(votes: Iterable[Vote], path: Path) -> None:
    """Write votes; the expert columns appear when any vote carries expert verdicts."""
    votes = list(votes)
    with_experts = any(v.experts for v in votes)
    header = VOTE_FIELDS + (EXPERT_FIELDS if with_experts else ())
    rows: list[list[object]] = []
    for v in votes:
        row: list[object] = [v.prompt_id, v.item_a, v.item_b, v.votes_a, v.votes_b, v.votes_tie]
        if with_experts:
            if v.experts and len(v.experts) != len(EXPERT_FIELDS):
                raise DataError(
                    f"{path}: vote {v.item_a}|{v.item_b} has {len(v.experts)} expert verdicts, need 3"
                )
            row.extend(v.experts or ("", "", ""))
        rows.append(row)
    write_csv(path, header, rows)
