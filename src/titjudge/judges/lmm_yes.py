"""Yes-probability LMM score (VQAScore / BagelScore style): P("Yes") instead of a generated number.

The VLM sees the image and a yes/no question about the prompt (template `lmm_yes`). The
score is read from the log-probabilities of the first answer token, the first generated
token that is not whitespace only:

    score = P(yes) / (P(yes) + P(no))

where P(yes) sums the probabilities of every alternative at that position whose text,
stripped of whitespace and trailing punctuation and case-folded, is a non-empty prefix
of "yes" ("Yes", " yes", "YES", and "Y"/"Ye", the first piece byte-level tokenizers without
a whole-word token write), and P(no) likewise for "no" ("No", " no", "N"). Normalising
by P(yes) + P(no) removes the mass the model puts on other openings ("The", "I"...), so
the score is the model's yes-vs-no preference, in [0, 1], calibrated by its own logits.
A side absent from the top-k has probability below the k-th alternative's and counts
as 0; when neither is present the item fails (never 0.5). Only `ANSWER_TOKENS` tokens
are generated: nothing after the answer is read.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from titjudge.judges.base import Judge, SamplingJudge
from titjudge.judges.building import (
    PROMPT_ONLY,
    Building,
    checked_template,
    needs_logprobs,
    needs_vision,
    repeated,
)
from titjudge.judges.options import LogprobOptions
from titjudge.judges.registry import judge_kind
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import CallMode
from titjudge.records.calls import TokenLogprobs
from titjudge.records.outcomes import JudgeInput, JudgeOutcome

#: tokens generated: enough to get past a leading space or newline to the answer
ANSWER_TOKENS = 4
_TRAILING = ".,!:;\"'"


class YesProbabilityError(ValueError):
    """The reply's log-probabilities hold no Yes/No alternative at the answer position."""


def answer_side(token: str) -> str | None:
    """'yes' or 'no' when `token` spells the start of that answer, else None."""
    text = token.strip().rstrip(_TRAILING).strip().casefold()
    if not text:
        return None
    if "yes".startswith(text):
        return "yes"
    if "no".startswith(text):
        return "no"
    return None


def yes_probability(logprobs: list[TokenLogprobs]) -> dict[str, Any]:
    """P(yes) / (P(yes) + P(no)) at the first non-whitespace generated token, with its parts."""
    position = next((i for i, entry in enumerate(logprobs) if entry.token.strip()), None)
    if position is None:
        raise YesProbabilityError("the reply has no answer token (only whitespace)")
    entry = logprobs[position]
    alternatives = dict(entry.top)
    alternatives.setdefault(entry.token, entry.logprob)
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in alternatives.items():
        side = answer_side(token)
        if side is not None:
            mass[side] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    if total <= 0.0:
        raise YesProbabilityError(
            f"neither Yes nor No among the {len(alternatives)} alternatives of the answer token {entry.token!r}"
        )
    return {
        "score": mass["yes"] / total,
        "p_yes": mass["yes"],
        "p_no": mass["no"],
        "position": position,
        "answer_token": entry.token,
    }


class LMMYesJudge(SamplingJudge):
    needs_description = False
    config: LogprobOptions

    def kind_facts(self) -> dict[str, Any]:
        return {
            **super().kind_facts(),
            "top_logprobs": self.config.logprobs_k,
            "score": "P(yes) / (P(yes) + P(no)) at the first answer token",
        }

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        system, user = self.template.render(prompt=given.item.prompt)
        request = GenerateRequest(
            prompt=user,
            system=system,
            images=(given.picture,),
            max_tokens=ANSWER_TOKENS,
            temperature=self.config.temperature,
            top_logprobs=self.config.logprobs_k,
            sample=given.sample,
        )
        # only the first token's probabilities are read: a reply cut after it is complete enough
        call = await self.client.text(
            request,
            role="judge",
            template=self.template.record(),
            accept_truncated=True,
            probe=probe,
        )
        if not call.ok:
            return JudgeOutcome.failed(self.name, call.error or "no answer", call)
        if not call.logprobs:
            return JudgeOutcome.failed(self.name, "the backend returned no log-probabilities", call)
        try:
            found = yes_probability(call.logprobs)
        except YesProbabilityError as exc:
            return JudgeOutcome.failed(self.name, str(exc), call)
        outcome = JudgeOutcome(
            variant=self.name,
            status="ok",
            score=round(found["score"], 6),
            raw=call.raw,
            rationale=(
                f"P(yes) / (P(yes) + P(no)) = {found['score']:.4f} at answer token {found['answer_token']!r} "
                f"(P(yes) {found['p_yes']:.4f}, P(no) {found['p_no']:.4f})"
            ),
            details={
                "p_yes": round(found["p_yes"], 6),
                "p_no": round(found["p_no"], 6),
                "answer_token": found["answer_token"],
                "answer_position": found["position"],
            },
        )
        outcome.take_usage(call)
        return outcome


class LMMYesJudgeConfig(LogprobOptions):
    """The describer's own VLM answers yes or no, unless `model` names another; only the first
    answer token is generated, so there is no reply budget."""

    describer_bound: ClassVar[bool] = True
    kind: Literal["lmm_yes"]


@judge_kind("lmm_yes", config=LMMYesJudgeConfig, label="LMM P(yes)")
def build_lmm_yes(config: LMMYesJudgeConfig, building: Building) -> Judge:
    template = checked_template(config, "lmm_yes", "lmm", PROMPT_ONLY)
    client = building.text_client(config)
    needs_vision(config, client)
    needs_logprobs(config, client, "an lmm_yes judge")
    return repeated(LMMYesJudge(config, client, template), config.repeats)
