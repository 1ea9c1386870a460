"""The human judgments an import has read, kept compact, and the files they become.

Every label shape ends as pairs in pairs.csv, the file every titjudge metric reads: a choice
is one vote on its pair; a ranking is a vote on each two of its images (the better-ranked
wins, equal ranks tie), as HPSv2 and ImageReward score their ranked test sets; ratings are a
vote on each two images of one prompt (the higher mean opinion score wins, equal means tie).
Rankings are also written as ranks.csv (so a run's SRCC and KRCC use the set's own ranks, not
ranks derived from the pairs) and ratings as ratings.csv (each image's mean opinion score and
its number of ratings) with the ranks of each prompt's images by that score.

What is held per pair is an 8-byte key and three vote counters (the pairs' ids are streamed to
a staging file), per ranked or rated image its ids and one number.
"""

from __future__ import annotations

import csv
import hashlib
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from titjudge.data.pairs import PAIR_FIELDS, PAIR_VOTE_FIELDS, RANK_FIELDS, format_rank
from titjudge.data.public.presets import GroupRank, Label, Ranks, RatedImages, Rating
from titjudge.files import atomic_open
from titjudge.records.items import Item, Winner

RATING_FIELDS = ("prompt_id", "item_id", "mos", "n_ratings")


def key(*parts: str) -> int:
    """An 8-byte digest of `parts`: what the import keeps per item and pair instead of ids."""
    return int.from_bytes(hashlib.blake2b("\0".join(parts).encode(), digest_size=8).digest(), "big")


@dataclass
class Tallied:
    """What the judgments came to (DATASET.md's numbers)."""

    pairs: int = 0
    ties: int = 0
    #: votes on a pair already voted on (several users, or the same two images in two groups)
    merged: int = 0
    ranked_items: int = 0
    rated_items: int = 0
    #: prompts ranked by more than one group: ranks.csv is then not written
    regrouped_prompts: int = 0
    files: list[str] = field(default_factory=list)


class Judgments:
    """Votes on pairs, rankings and ratings as the rows give them; `write` makes the files."""

    def __init__(self, staging: Path) -> None:
        self._pair_ids = (staging / "pairs.tsv").open("w", encoding="utf-8")
        self._staged = staging / "pairs.tsv"
        self._numbers: dict[int, int] = {}
        self._a, self._b, self._tie = array("l"), array("l"), array("l")
        #: 1 where the pair's item_a (its first image when first voted on) has the smaller id
        self._a_first = array("b")
        self.tallied = Tallied()
        self._ranks: list[tuple[str, str, float]] = []
        self._ranked_prompts: set[int] = set()
        self._groups: dict[int, list[tuple[str, str, float]]] = {}
        self._rated: dict[int, int] = {}
        self._rating_ids: list[tuple[str, str]] = []
        self._rating_total, self._rating_count = array("d"), array("l")

    def add(self, label: Label, items: Sequence[Item]) -> None:
        """The row's label on its images' items (in the label's order)."""
        if isinstance(label, Ranks):
            self._ranking(
                items[0].prompt_id,
                [(i.item_id, r) for i, r in zip(items, label.ranks, strict=True)],
            )
        elif isinstance(label, GroupRank):
            group = self._groups.setdefault(key(label.group, items[0].prompt_id), [])
            if all(item_id != items[0].item_id for _, item_id, _ in group):
                group.append((items[0].prompt_id, items[0].item_id, label.rank))
        elif isinstance(label, Rating):
            self._rating(items[0], label.ratings)
        elif isinstance(label, RatedImages):
            for item, ratings in zip(items, label.per_image, strict=True):
                self._rating(item, ratings)
        else:
            self.vote(items[0].prompt_id, items[0].item_id, items[1].item_id, label)

    def vote(self, prompt_id: str, first: str, second: str, winner: Winner) -> None:
        """One vote on the pair of `first` and `second` ('a' = first)."""
        pair = key(min(first, second), max(first, second))
        slot = self._numbers.get(pair)
        if slot is None:
            slot = self._numbers[pair] = len(self._a)
            for counter in (self._a, self._b, self._tie):
                counter.append(0)
            self._a_first.append(first < second)
            self._pair_ids.write(f"{prompt_id}\t{first}\t{second}\n")
        else:
            self.tallied.merged += 1
        # this vote shows the pair's images the other way round from its first one
        flipped = (first < second) != bool(self._a_first[slot])
        if winner == "tie":
            self._tie[slot] += 1
        elif (winner == "a") != flipped:
            self._a[slot] += 1
        else:
            self._b[slot] += 1

    def _ranking(self, prompt_id: str, ranked: Sequence[tuple[str, float]]) -> None:
        """A ranking of one prompt's images (1 = best): a vote on each two of them."""
        prompt = key(prompt_id)
        if prompt in self._ranked_prompts:
            self.tallied.regrouped_prompts += 1
        self._ranked_prompts.add(prompt)
        for item_id, rank in ranked:
            self._ranks.append((prompt_id, item_id, rank))
        for (first, rank_a), (second, rank_b) in combinations(ranked, 2):
            self.vote(prompt_id, first, second, _by_rank(rank_a, rank_b))

    def _rating(self, item: Item, ratings: Sequence[float]) -> None:
        found = key(item.item_id)
        slot = self._rated.get(found)
        if slot is None:
            slot = self._rated[found] = len(self._rating_ids)
            self._rating_ids.append((item.prompt_id, item.item_id))
            self._rating_total.append(0.0)
            self._rating_count.append(0)
        self._rating_total[slot] += sum(ratings)
        self._rating_count[slot] += len(ratings)

    def write(self, out: Path) -> Tallied:
        """pairs.csv, and ranks.csv and ratings.csv where the set has them, atomically."""
        for group in self._groups.values():
            self._ranking(group[0][0], [(item_id, rank) for _, item_id, rank in group])
        ratings = self._by_prompt_ratings()
        for prompt_id, rated in ratings:
            ranked = _ranks_of([mos for _, mos in rated])
            self._ranking(
                prompt_id, [(item_id, r) for (item_id, _), r in zip(rated, ranked, strict=True)]
            )
        self._pair_ids.close()
        self._write_pairs(out / "pairs.csv")
        if self._rating_ids:
            self._write(
                out / "ratings.csv",
                RATING_FIELDS,
                (
                    (p, i, f"{self._rating_total[n] / self._rating_count[n]:.6g}", n_ratings)
                    for n, ((p, i), n_ratings) in enumerate(
                        zip(self._rating_ids, self._rating_count, strict=True)
                    )
                ),
            )
            self.tallied.rated_items = len(self._rating_ids)
        if self._ranks and not self.tallied.regrouped_prompts:
            self._write(
                out / "ranks.csv",
                RANK_FIELDS,
                ((p, i, format_rank(r)) for p, i, r in self._ranks),
            )
            self.tallied.ranked_items = len(self._ranks)
        return self.tallied

    def close(self) -> None:
        self._pair_ids.close()

    def _by_prompt_ratings(self) -> list[tuple[str, list[tuple[str, float]]]]:
        """Each prompt's rated images and their mean opinion scores, prompts in first-seen
        order."""
        grouped: dict[str, list[tuple[str, float]]] = {}
        for n, (prompt_id, item_id) in enumerate(self._rating_ids):
            mos = self._rating_total[n] / self._rating_count[n]
            grouped.setdefault(prompt_id, []).append((item_id, mos))
        return list(grouped.items())

    def _write_pairs(self, path: Path) -> None:
        with self._staged.open(encoding="utf-8") as staged, atomic_open(path) as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(PAIR_FIELDS + PAIR_VOTE_FIELDS)
            for number, line in enumerate(staged):
                prompt_id, item_a, item_b = line.rstrip("\n").split("\t")
                a, b = self._a[number], self._b[number]
                winner = "a" if a > b else "b" if b > a else "tie"
                self.tallied.ties += winner == "tie"
                writer.writerow((prompt_id, item_a, item_b, winner, a, b, self._tie[number]))
        self.tallied.pairs = len(self._a)
        self.tallied.files.append(path.name)

    def _write(self, path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
        with atomic_open(path) as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
        self.tallied.files.append(path.name)


def _by_rank(rank_a: float, rank_b: float) -> Winner:
    return "a" if rank_a < rank_b else "b" if rank_b < rank_a else "tie"


def _ranks_of(scores: Sequence[float]) -> list[float]:
    """Ranks by score, highest first (1 = best), tied scores sharing their average rank."""
    order = sorted(range(len(scores)), key=lambda n: -scores[n])
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        for n in order[start : end + 1]:
            ranks[n] = (start + end) / 2 + 1
        start = end + 1
    return ranks


__all__ = ["RATING_FIELDS", "Judgments", "Tallied", "key"]
