"""G-Eval style expected score: the probability-weighted mean of the candidate score tokens.

A judge that samples "7" when its distribution over the score was {6: 0.3, 7: 0.4, 8: 0.3}
throws information away, and integer scores tie often. With token log-probabilities the
score can be the expectation instead. Method (`expected_score`):

1. Locate the score. The generated tokens' texts are joined (so every character knows
   its token) and the `"score": <integer>` whose value equals the validated verdict's is
   looked up, the last one if several. Token j holds the number's first character.
2. Candidates are token j's top-k alternatives (plus the sampled token itself, whose
   log-probability is always known). The part of token j before the number (a space,
   `": `...) must open the alternative too and is removed, as is whitespace; what is left
   must be digits (optionally followed by token j's own trailing text, e.g. `}`).
3. Multi-token numbers (Qwen writes "85" as "8", "5"): only the leading token's
   uncertainty is used. A candidate's value is its digits followed by the sampled
   number's digits beyond token j ("7" -> 75), and candidates whose value would have a
   different number of digits than the sampled score are dropped: their continuations
   were never scored, so their value is unknown. Single-token numbers (OpenAI's tokens
   hold up to 3 digits; any 1-9 scale everywhere) are the exact G-Eval expectation, which
   is why `score_mode: expected` defaults to the 1-9 `judge_expected` template.
4. Values outside the judge's [lo, hi] scale are dropped; the score is
   sum(p_i * v_i) / sum(p_i) over the kept candidates (renormalised over what top-k
   shows; `mass` = sum(p_i) says how much of the distribution that was).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from titjudge.records.calls import TokenLogprobs

_SCORE = re.compile(r'"score"\s*:\s*(-?\d+(?:\.\d+)?)')
_DIGITS = re.compile(r"(\d+)(.*)\Z", re.DOTALL)


class ExpectedScoreError(ValueError):
    """The reply's log-probabilities do not allow an expected score (reason in the message)."""


@dataclass
class ExpectedScore:
    value: float
    sampled: int
    #: probability per candidate score value (spellings of one value merged)
    candidates: dict[int, float] = field(default_factory=dict)
    #: sum of the kept candidates' probabilities (1.0 = the whole distribution was seen)
    mass: float = 0.0
    #: tokens the sampled number spans (1 = exact G-Eval expectation)
    n_tokens: int = 1

    def details(self) -> dict[str, object]:
        """What the run records: sampled score, candidate probabilities, mass seen."""
        return {
            "score_mode": "expected",
            "sampled_score": self.sampled,
            "candidates": {str(v): round(p, 6) for v, p in sorted(self.candidates.items())},
            "candidate_mass": round(self.mass, 6),
            "score_tokens": self.n_tokens,
        }


def _spans(logprobs: list[TokenLogprobs]) -> tuple[str, list[int]]:
    """Joined text and, per character, the index of the token it came from."""
    owner: list[int] = []
    for index, entry in enumerate(logprobs):
        owner.extend([index] * len(entry.token))
    return "".join(entry.token for entry in logprobs), owner


def _locate(text: str, sampled: float) -> re.Match[str]:
    matches = list(_SCORE.finditer(text))
    if not matches:
        raise ExpectedScoreError('no "score": <number> in the generated tokens')
    fitting = [m for m in matches if float(m.group(1)) == float(sampled)]
    if not fitting:
        raise ExpectedScoreError(
            f"the generated tokens hold no score equal to the verdict's {sampled:g}"
        )
    found = fitting[-1]
    if "." in found.group(1) or found.group(1).startswith("-"):
        raise ExpectedScoreError(
            f"score {found.group(1)} is not a non-negative integer; expected mode needs "
            "an integer scale"
        )
    return found


def _candidate_digits(alternative: str, prefix: str, suffix: str) -> str | None:
    """The digits an alternative token would have written where the score starts, else None."""
    text = alternative.strip()
    lead = prefix.strip()
    if lead:
        if not text.startswith(lead):
            return None
        text = text[len(lead) :].strip()
    match = _DIGITS.match(text)
    if match is None or not match.group(1).isascii():
        return None
    rest = match.group(2).strip()
    return match.group(1) if rest in ("", suffix.strip()) else None


def expected_score(
    logprobs: list[TokenLogprobs], sampled: float, lo: int, hi: int
) -> ExpectedScore:
    """The probability-weighted score; see the module docstring for the method."""
    text, owner = _spans(logprobs)
    found = _locate(text, sampled)
    start, end = found.start(1), found.end(1)
    first, last = owner[start], owner[end - 1]
    token = logprobs[first]
    token_start = owner.index(first)
    prefix = token.token[: start - token_start]
    in_token = token.token[start - token_start :]
    number = found.group(1)
    head = in_token[: min(len(in_token), len(number))]  # the number's digits inside token j
    suffix = in_token[len(head) :] if first == last else ""
    tail = number[len(head) :]
    alternatives = dict(token.top)
    alternatives.setdefault(token.token, token.logprob)
    probs: dict[int, float] = {}
    for alternative, logprob in alternatives.items():
        digits = _candidate_digits(alternative, prefix, suffix)
        if digits is None:
            continue
        if tail and len(digits + tail) != len(number):
            continue
        value = int(digits + tail)
        if lo <= value <= hi:
            probs[value] = probs.get(value, 0.0) + math.exp(logprob)
    mass = sum(probs.values())
    if mass <= 0.0:
        raise ExpectedScoreError(
            f"no candidate score token in [{lo}, {hi}] among the top alternatives"
        )
    mean = sum(v * p for v, p in probs.items()) / mass
    return ExpectedScore(
        value=mean, sampled=int(number), candidates=probs, mass=mass, n_tokens=last - first + 1
    )
