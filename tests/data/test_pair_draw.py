"""Which pairs `titjudge annotate` asks about: K per prompt, balanced; or a pairs file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from titjudge.data.pair_draw import draw_pairs, load_pairs_to_judge
from titjudge.errors import DataError
from titjudge.records.items import Item


def items_of(prompts: int, models: int) -> list[Item]:
    return [
        Item(f"p{p}_m{m}", f"p{p}", "prompt", Path(f"/x/{p}_{m}.png"), f"m{m}")
        for p in range(prompts)
        for m in range(models)
    ]


@pytest.mark.parametrize("models", [2, 3, 5, 6, 9, pytest.param(13, marks=pytest.mark.slow)])
def test_every_image_appears_about_equally_often(models: int) -> None:
    items = items_of(1, models)
    for k in range(1, models * (models - 1) // 2 + 1):
        for seed in range(4):
            pairs = draw_pairs(items, k, seed)
            assert len(pairs) == k
            assert len({frozenset((p.item_a, p.item_b)) for p in pairs}) == k
            counts = Counter(i for p in pairs for i in (p.item_a, p.item_b))
            seen = [counts.get(item.item_id, 0) for item in items]
            assert max(seen) - min(seen) <= 1, (models, k, seed, seen)


def test_draw_is_per_prompt_deterministic_and_seeded() -> None:
    items = items_of(3, 6)
    first = draw_pairs(items, 4, seed=1)
    assert first == draw_pairs(items, 4, seed=1)
    assert [p for p in first if p.prompt_id == "p0"] == [
        p for p in draw_pairs(items[:6], 4, seed=1)
    ]  # a prompt's draw does not depend on the others
    assert any(draw_pairs(items, 4, seed=s) != first for s in range(2, 6))
    assert all(p.item_a.split("_")[0] == p.item_b.split("_")[0] == p.prompt_id for p in first)


def test_all_pairs_by_default_and_when_k_is_large() -> None:
    items = items_of(2, 4)
    assert len(draw_pairs(items, None)) == 12
    assert draw_pairs(items, 50) == draw_pairs(items, None)
    with pytest.raises(DataError, match="--per-prompt must be at least 1"):
        draw_pairs(items, 0)
    with pytest.raises(DataError, match="no prompt has two images"):
        draw_pairs(items_of(3, 1), 2)


def test_pairs_file(tmp_path: Path) -> None:
    items = {i.item_id: i for i in items_of(2, 3)}
    good = tmp_path / "pairs.csv"
    good.write_text("prompt_id,item_a,item_b,winner\np0,p0_m0,p0_m2,a\np1,p1_m1,p1_m0,\n")
    pairs = load_pairs_to_judge(good, items)
    assert [p.pair_id for p in pairs] == ["p0_m0|p0_m2", "p1_m1|p1_m0"]
    cases = {
        "prompt_id,item_a\np0,p0_m0\n": "missing column",
        "prompt_id,item_a,item_b\np0,p0_m0,p0_m0\n": "same item",
        "prompt_id,item_a,item_b\np0,p0_m0,p1_m0\n": "belongs to prompt 'p1'",
        "prompt_id,item_a,item_b\np0,p0_m0,nope\n": "unknown item 'nope'",
        "prompt_id,item_a,item_b\np0,p0_m0,p0_m1\np0,p0_m1,p0_m0\n": "appears twice",
        "prompt_id,item_a,item_b\n": "no rows",
    }
    for text, message in cases.items():
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(DataError, match=message):
            load_pairs_to_judge(bad, items)
