"""A lexical baseline comparer: cosine similarity of content-word counts.

Not TIT-Score: no model, no semantics, just shared words between prompt and
description. It needs nothing installed, so the demo always has one real column, and
it is the floor any model-based comparer should beat.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, ClassVar, Literal

from titjudge.judges.base import Judge
from titjudge.judges.building import Building
from titjudge.judges.options import JudgeOptions, no_sampled_call
from titjudge.judges.registry import judge_kind
from titjudge.models.core.clients import CallMode
from titjudge.records.outcomes import JudgeInput, JudgeOutcome

_WORD = re.compile(r"[a-z][a-z0-9'-]+")
STOPWORDS = frozenset(
    """a an the and or but of in on at to for with by from as is are was were be been being it its this that
    these those there their they them he she his her we our you your i me my which who whom whose what when where
    while into onto over under above below between behind beside near through across about around up down out off
    than then so such very more most some any each every all both few many much no not only own same too can will
    just also has have had do does did having image picture scene shows showing shown depicts depicting""".split()
)


def content_words(text: str) -> Counter[str]:
    return Counter(w.strip("'-") for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def lexical_similarity(a: str, b: str) -> float | None:
    """Cosine of content-word counts; None when either text has no content words."""
    return counts_cosine(content_words(a), content_words(b))


def counts_cosine(ca: Counter[str], cb: Counter[str]) -> float | None:
    """Cosine of two word-count vectors; None when either is empty."""
    if not ca or not cb:
        return None
    dot = sum(n * cb[w] for w, n in ca.items())
    return dot / (
        math.sqrt(sum(n * n for n in ca.values())) * math.sqrt(sum(n * n for n in cb.values()))
    )


class LexicalJudge(Judge):
    #: prompts whose content words are kept (each prompt is judged once per T2I model)
    PROMPTS_KEPT = 1024

    def __init__(self, config: LexicalJudgeConfig):
        super().__init__(config)
        self._prompt_words: dict[str, Counter[str]] = {}

    def _words_of_prompt(self, prompt: str) -> Counter[str]:
        found = self._prompt_words.get(prompt)
        if found is None:
            if len(self._prompt_words) >= self.PROMPTS_KEPT:
                self._prompt_words.pop(next(iter(self._prompt_words)))
            found = self._prompt_words[prompt] = content_words(prompt)
        return found

    def kind_facts(self) -> dict[str, Any]:
        return {"method": "cosine of content-word counts (baseline, not TIT-Score)"}

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        ca, cb = self._words_of_prompt(given.item.prompt), content_words(given.description)
        score = counts_cosine(ca, cb)
        if score is None:
            return JudgeOutcome.failed(self.name, "prompt or description has no content words")
        # most frequent in the prompt first, ties alphabetical: never the set's (hash) order
        shared = sorted(set(ca) & set(cb), key=lambda w: (-ca[w], w))[:12]
        return JudgeOutcome(
            variant=self.name,
            status="ok",
            score=round(score, 6),
            rationale=f"content-word cosine {score:.4f}; shared words: {', '.join(shared) or 'none'}",
        )


class LexicalJudgeConfig(JudgeOptions):
    """No model, so no model options: only a name and a fallback."""

    refused: ClassVar[dict[str, str]] = {
        "model": "this judge is lexical and uses no model; remove 'model'",
        "repeats": no_sampled_call("lexical"),
    }
    kind: Literal["lexical"]


@judge_kind("lexical", config=LexicalJudgeConfig, label="Lexical")
def build_lexical(config: LexicalJudgeConfig, building: Building) -> Judge:
    return LexicalJudge(config)
