"""Which pairs `titjudge annotate` asks about: a pairs file, K per prompt, or every pair.

A pairs file needs `prompt_id, item_a, item_b` (a `winner` column, if any, is ignored: these
are pairs to judge, not judged ones); both items must be in the manifest under that prompt.

`draw_pairs(items, per_prompt=K)` picks K pairs of each prompt's images so that every image
appears about equally often: each pick takes, among the pairs not yet picked, one whose two
images have been picked least so far (the smaller of their counts first, then the larger),
ties broken by a generator seeded with the seed and the prompt id; where that leaves an
image picked twice more than another, pairs are moved from one to the other (`_evened`).
Within a prompt the counts then differ by at most one (m = 5 images, K = 5: each image
twice; K = 4: two images once, three twice). The draw is deterministic for a given
manifest, K and seed, and one prompt's draw does not depend on the others.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from titjudge.data.pairs import check_pair_ids, check_pair_items, iter_csv
from titjudge.errors import DataError, where
from titjudge.records.items import Item

PAIR_COLUMNS = ("prompt_id", "item_a", "item_b")


@dataclass(frozen=True)
class PairToJudge:
    """Two images of one prompt to show an annotator; `item_a` / `item_b` name the columns of
    the votes file, not the sides of the screen."""

    prompt_id: str
    item_a: str
    item_b: str

    @property
    def pair_id(self) -> str:
        return f"{self.item_a}|{self.item_b}"


def load_pairs_to_judge(path: Path, items: Mapping[str, Item]) -> list[PairToJudge]:
    """The pairs of a CSV; each names two manifest items of its prompt, once per file."""
    path = Path(path)
    pairs: list[PairToJudge] = []
    seen: dict[frozenset[str], int] = {}
    for number, row in iter_csv(path, PAIR_COLUMNS, "pairs file"):
        loc = where(path, number)
        for key in PAIR_COLUMNS:
            if not row[key]:
                raise DataError(f"{loc}: field '{key}' is empty")
        prompt_id, item_a, item_b = (row[key] for key in PAIR_COLUMNS)
        check_pair_ids(item_a, item_b, path, number, seen)
        check_pair_items(prompt_id, item_a, item_b, items, loc)
        pairs.append(PairToJudge(prompt_id, item_a, item_b))
    if not pairs:
        raise DataError(f"{path}: pairs file has a header but no rows")
    return pairs


def _by_prompt(items: Sequence[Item]) -> dict[str, list[Item]]:
    grouped: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        grouped[item.prompt_id].append(item)
    return grouped


def _evened(chosen: set[tuple[int, int]], degree: list[int]) -> None:
    """Move pairs from the most to the least picked image until counts differ by at most one.

    With u picked at least twice more than v, some partner w of u (w != v) is not a partner
    of v (u has more partners besides v than v has at all), so (u, w) becomes (v, w): u loses
    one, v gains one, w keeps its count; the sum of squared counts falls, so this ends.
    """
    while max(degree) - min(degree) > 1:
        u, v = degree.index(max(degree)), degree.index(min(degree))
        for w in sorted({j for pair in chosen if u in pair for j in pair} - {u, v}):
            if tuple(sorted((v, w))) not in chosen:
                chosen.remove((min(u, w), max(u, w)))
                chosen.add((min(v, w), max(v, w)))
                degree[u] -= 1
                degree[v] += 1
                break


def _balanced(members: Sequence[Item], k: int, rng: random.Random) -> list[PairToJudge]:
    every = list(combinations(range(len(members)), 2))
    if k >= len(every):
        picked = every
    else:
        degree = [0] * len(members)
        left = set(every)
        chosen: set[tuple[int, int]] = set()
        for _ in range(k):
            ties = {pair: rng.random() for pair in sorted(left)}
            best = min(
                left,
                key=lambda p: (
                    min(degree[p[0]], degree[p[1]]),
                    max(degree[p[0]], degree[p[1]]),
                    ties[p],
                ),
            )
            left.remove(best)
            chosen.add(best)
            degree[best[0]] += 1
            degree[best[1]] += 1
        _evened(chosen, degree)
        picked = sorted(chosen)
    return [
        PairToJudge(members[i].prompt_id, members[i].item_id, members[j].item_id) for i, j in picked
    ]


def draw_pairs(items: Sequence[Item], per_prompt: int | None, seed: int = 0) -> list[PairToJudge]:
    """K pairs per prompt (all of a prompt's pairs when it has K or fewer, or when
    `per_prompt` is None), prompts in manifest order; see the module docstring."""
    if per_prompt is not None and per_prompt < 1:
        raise DataError(f"--per-prompt must be at least 1, got {per_prompt}")
    pairs: list[PairToJudge] = []
    for prompt_id, members in _by_prompt(items).items():
        if len(members) < 2:
            continue
        k = per_prompt if per_prompt is not None else len(members) * (len(members) - 1) // 2
        pairs.extend(_balanced(members, k, random.Random(f"{seed}:{prompt_id}")))
    if not pairs:
        raise DataError("no prompt has two images to compare")
    return pairs
