"""The embedding and lexical judges' arithmetic: the same numbers, bit for bit, as the plain
formulas (a cached re-run must write the scores an earlier run wrote)."""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from titjudge.judges.embedding import cosine
from titjudge.judges.lexical import (
    LexicalJudge,
    LexicalJudgeConfig,
    content_words,
    lexical_similarity,
)
from titjudge.models.core.clients import SEND
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeInput

LEXICAL = LexicalJudge(LexicalJudgeConfig(name="lexical", kind="lexical"))


def reference_cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def reference_lexical(a: str, b: str) -> float:
    ca, cb = content_words(a), content_words(b)
    dot = sum(n * cb[w] for w, n in ca.items())
    return dot / (
        math.sqrt(sum(n * n for n in ca.values())) * math.sqrt(sum(n * n for n in cb.values()))
    )


@pytest.mark.parametrize("dim", [1, 3, 384, 1024, pytest.param(4096, marks=pytest.mark.slow)])
def test_cosine_equals_the_plain_formula_bit_for_bit(dim: int) -> None:
    rng = random.Random(dim)
    for _ in range(50):
        a = [rng.gauss(0, 1) for _ in range(dim)]
        b = [rng.gauss(0, 1) * 1e-3 for _ in range(dim)]
        assert cosine(a, b) == reference_cosine(a, b)


def test_cosine_refuses_zero_and_mismatched_vectors() -> None:
    with pytest.raises(ValueError, match="zero-length"):
        cosine([0.0, 0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="differ in length"):
        cosine([1.0, 2.0], [1.0, 2.0, 3.0])


def test_lexical_judge_score_and_words_equal_the_plain_formula() -> None:
    prompt = "A red fox jumps over the lazy brown dog near a red barn at dawn"
    described = "The image shows a brown dog lying near a red barn; a red fox runs past at dawn."
    item = Item(item_id="a", prompt_id="p", prompt=prompt, image=Path("x.png"), t2i_model="m")
    outcome = asyncio.run(
        LEXICAL.judge(JudgeInput(item, None, Described(text=described)), probe=SEND)
    )
    expected = reference_lexical(prompt, described)
    assert lexical_similarity(prompt, described) == expected
    assert outcome.status == "ok" and outcome.score == round(expected, 6)
    # most frequent in the prompt first, ties in alphabetical order (never a set's hash order)
    assert outcome.rationale == (
        f"content-word cosine {expected:.4f}; shared words: red, barn, brown, dawn, dog, fox"
    )
    assert content_words(prompt) == Counter(
        {"red": 2, "fox": 1, "jumps": 1, "lazy": 1, "brown": 1, "dog": 1, "barn": 1, "dawn": 1}
    )


def test_lexical_judge_without_content_words_fails() -> None:
    item = Item(item_id="a", prompt_id="p", prompt="the and of", image=Path("x.png"), t2i_model="m")
    outcome = asyncio.run(
        LEXICAL.judge(JudgeInput(item, None, Described(text="a dog")), probe=SEND)
    )
    assert outcome.status == "failed" and "no content words" in (outcome.error or "")


def test_lexical_rationale_lists_tied_words_alphabetically_at_most_twelve() -> None:
    """Fourteen words tie at one count each: which twelve are shown, and in what order, is
    fixed, not the order a set of str (salted per process by PYTHONHASHSEED) happens to give."""
    words = "zebra yak walrus vole urchin toad swan raven quail panda otter newt moth lynx"
    item = Item(item_id="a", prompt_id="p", prompt=words, image=Path("x.png"), t2i_model="m")
    reversed_text = " ".join(reversed(words.split()))
    outcome = asyncio.run(
        LEXICAL.judge(JudgeInput(item, None, Described(reversed_text)), probe=SEND)
    )
    assert outcome.rationale == (
        "content-word cosine 1.0000; shared words: lynx, moth, newt, otter, panda, quail, "
        "raven, swan, toad, urchin, vole, walrus"
    )
