"""Pairwise judge: which of two images of one prompt follows it better, read from their descriptions.

Each pair is judged in both orders (A shown first, then B shown first) with the
`pairwise` template and the `PairReply` schema. The pair's verdict is the image both
orders chose; a disagreement between the orders (including one tie and one choice)
counts as a tie, which is never a correct prediction. With `repeats: N` each order is
asked N times (sample k = distinct cache key) and its choice is the median of the
samples coded first = +1, tie = 0, second = -1 (an even split is a tie).

The pairs are the human pairs of the run's items (human ties included: they inform
win rates, not accuracy), or, without human pairs, every pair of images of a prompt.
Scores: each image's win rate over the pairs it was judged in, (wins + ties / 2) / pairs,
written as the variant's per-item score so SRCC, KRCC, nDCG and the leaderboard work
unchanged. Pairwise accuracy comes straight from the verdicts (`pairwise_stats`).
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any, ClassVar, Literal

from pydantic import model_validator

from titjudge.judges.base import Judge, TextJudge
from titjudge.judges.building import Building, checked_template
from titjudge.judges.options import SampledOptions, reply_budget
from titjudge.judges.registry import judge_kind
from titjudge.judges.schemas import PairReply
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import CallMode
from titjudge.records.calls import sum_costs
from titjudge.records.items import HumanPair, Item
from titjudge.records.outcomes import Described, JudgeInput, JudgeOutcome
from titjudge.records.pairs import Choice, OrderVerdict, PairVerdict, PairwiseRun

#: what the pairwise template renders: the prompt and the two descriptions in their order
PAIR_VARIABLES = frozenset({"prompt", "first", "second"})
_CODE: dict[str, int] = {"first": 1, "tie": 0, "second": -1}
#: pairs judged concurrently per step; the model's limiter bounds requests in flight
PAIR_CHUNK = 128


class PairwiseJudge(TextJudge):
    per_item = False
    config: PairwiseJudgeConfig

    @property
    def repeats(self) -> int:
        return self.config.repeats

    def kind_facts(self) -> dict[str, Any]:
        return {
            **super().kind_facts(),
            "repeats": self.repeats,
            "score": "win rate over judged pairs, ties count half",
        }

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        return JudgeOutcome.failed(
            self.name,
            "a pairwise judge compares two images of one prompt; it scores "
            "only inside `titjudge run`, over the run's pairs",
        )

    async def _sample(
        self, prompt: str, first: str, second: str, sample: int, *, probe: CallMode
    ) -> tuple[Choice | None, Any]:
        system, user = self.template.render(prompt=prompt, first=first, second=second)
        request = GenerateRequest(
            prompt=user,
            system=system,
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            sample=sample,
            made_for="pair",  # a refusal of `run.budget_usd` is counted as a pair's
        )
        call = await self.client.structured(
            request, PairReply, role="judge", template=self.template.record(), probe=probe
        )
        return (call.value.winner if call.ok and call.value is not None else None), call

    async def judge_order(
        self,
        prompt: str,
        first: tuple[str, str],
        second: tuple[str, str],
        *,
        probe: CallMode,
    ) -> OrderVerdict:
        """Show `first` then `second` ((item id, description) each), `repeats` times;
        `probe`: the calls' mode (`models.core.clients.CallMode`)."""
        order = OrderVerdict(first=first[0], second=second[0])
        found = await asyncio.gather(
            *(
                self._sample(prompt, first[1], second[1], k, probe=probe)
                for k in range(self.repeats)
            )
        )
        for choice, call in found:
            order.samples.append(choice)
            order.tokens_in += call.tokens_in
            order.tokens_out += call.tokens_out
            order.latency += call.latency
            order.cached = order.cached and call.cached
            if call.answered_by and call.answered_by not in order.answered_by:
                order.answered_by.append(call.answered_by)
        order.cost = sum_costs(call.cost for _, call in found)
        codes = [_CODE[c] for c in order.samples if c is not None]
        if not codes:
            order.error = next((call.error for _, call in found if call.error), "no verdict")
            order.raw = found[0][1].raw
            return order
        middle = statistics.median(codes)
        order.choice = "first" if middle > 0 else "second" if middle < 0 else "tie"
        # the rationale shown is that of a sample that chose the median choice (an even split: the first one)
        chosen = next((call for choice, call in found if choice == order.choice), None)
        chosen = chosen or next(call for choice, call in found if choice is not None)
        order.rationale, order.raw = chosen.value.rationale, chosen.raw
        return order

    async def judge_pair(
        self,
        prompt: str,
        pair: HumanPair,
        descriptions: dict[str, Described],
        *,
        probe: CallMode,
    ) -> PairVerdict:
        a, b = descriptions[pair.item_a], descriptions[pair.item_b]
        human = pair.winner if pair.winner in ("a", "b", "tie") else None
        judged = PairVerdict(
            prompt_id=pair.prompt_id,
            item_a=pair.item_a,
            item_b=pair.item_b,
            human=human,
            forward=OrderVerdict(first=pair.item_a, second=pair.item_b),
            backward=OrderVerdict(first=pair.item_b, second=pair.item_a),
        )
        missing = [
            (item_id, d) for item_id, d in ((pair.item_a, a), (pair.item_b, b)) if d.text is None
        ]
        if missing:
            error = "; ".join(f"no description of {item_id}: {d.error}" for item_id, d in missing)
            judged.forward.error = judged.backward.error = error
            return judged
        assert a.text is not None and b.text is not None
        judged.forward, judged.backward = await asyncio.gather(
            self.judge_order(prompt, (pair.item_a, a.text), (pair.item_b, b.text), probe=probe),
            self.judge_order(prompt, (pair.item_b, b.text), (pair.item_a, a.text), probe=probe),
        )
        return judged


def pairs_to_judge(
    items: Sequence[Item], human_pairs: Sequence[HumanPair] | None
) -> list[HumanPair]:
    """The run's human pairs (both images in the run), or every within-prompt pair without humans
    (those get winner 'tie' as a placeholder and human None in the judgements)."""
    known = {item.item_id for item in items}
    if human_pairs is not None:
        return [p for p in human_pairs if p.item_a in known and p.item_b in known]
    by_prompt: dict[str, list[str]] = {}
    for item in items:
        by_prompt.setdefault(item.prompt_id, []).append(item.item_id)
    return [
        HumanPair(prompt_id, a, b, "tie")
        for prompt_id, ids in sorted(by_prompt.items())
        for a, b in combinations(sorted(ids), 2)
    ]


async def run_pairwise(
    judge: PairwiseJudge,
    items: Sequence[Item],
    descriptions: dict[str, Described],
    human_pairs: Sequence[HumanPair] | None,
    on_pair: Callable[[int], None] | None = None,
    *,
    probe: CallMode,
) -> PairwiseRun:
    """Judge every pair, `PAIR_CHUNK` pairs at a time; a failed pair is a record, never dropped.
    `probe`: the calls' mode (`models.core.clients.CallMode`)."""
    prompts = {item.prompt_id: item.prompt for item in items}
    pairs = pairs_to_judge(items, human_pairs)
    judgements: list[PairVerdict] = []
    for start in range(0, len(pairs), PAIR_CHUNK):
        chunk = pairs[start : start + PAIR_CHUNK]
        done = await asyncio.gather(
            *(judge.judge_pair(prompts[p.prompt_id], p, descriptions, probe=probe) for p in chunk)
        )
        judgements.extend(done)
        if on_pair is not None:
            on_pair(len(chunk))
    if human_pairs is None:
        for judged in judgements:
            judged.human = None
    return PairwiseRun(judge=judge.name, repeats=judge.repeats, judgements=judgements)


class PairwiseJudgeConfig(SampledOptions):
    """A judge model of its own compares the two descriptions of each pair, in both orders."""

    scores_per_item: ClassVar[bool] = False
    kind: Literal["pairwise"]
    max_tokens: int = reply_budget()

    @model_validator(mode="after")
    def _no_fallback(self) -> PairwiseJudgeConfig:
        if self.fallback is not None:
            raise ValueError(
                f"judge {self.name!r}: a pairwise judge scores win rates over pairs; it takes no "
                "fallback"
            )
        return self


@judge_kind("pairwise", config=PairwiseJudgeConfig, label="Pairwise-{model}")
def build_pairwise(config: PairwiseJudgeConfig, building: Building) -> Judge:
    template = checked_template(config, "pairwise", "pairwise", PAIR_VARIABLES)
    client = building.text_client(config)
    return PairwiseJudge(config, client, template)


__all__ = [
    "PAIR_CHUNK",
    "PairwiseJudge",
    "PairwiseJudgeConfig",
    "build_pairwise",
    "pairs_to_judge",
    "run_pairwise",
]
