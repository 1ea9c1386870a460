"""A cache probe that counts, instead of sending, the calls a run would send now.

Handed an `EstimateProbe` (the run context's `probe`), every call goes through its client exactly as in a run (the same request,
the same cache key, the same lookup); a call whose answer is cached is a hit, and one whose
answer is not is sent nowhere: it becomes a `Miss`, with the request's input tokens estimated by
the estimator `tpm` pacing uses (`token_estimate`) and its output caps. A key missed twice (a
prompt's decomposition shared by its images, a judge shared by two ablation rows) is one call,
as the run would make it once and read it from the cache after.

What a missed call answers: a free-text call (a description) answers a placeholder of its
expected length, named by its key, so the calls that read it (judges) are asked and counted
too, their prompts carrying text of the length the describer is expected to write. A
validated-object call whose answer another call reads (a checklist's decomposition, read by
each image's verdict call) answers its type's `stand_in(text)` around such a placeholder, so
those calls are counted too; any other validated-object call fails (nothing downstream of a
judge's verdict asks a model).

The hits seen on the way are the cache's record of what this model in this role wrote before
(a pilot's answers): their mean output and thinking tokens are the expected usage of the misses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from titjudge.models.calls.pipeline import CallPipeline
from titjudge.models.calls.probe import CacheProbe, ComputeOne
from titjudge.models.calls.token_estimate import CHARS_PER_TOKEN, request_tokens, text_tokens
from titjudge.models.core.base import GenerateRequest
from titjudge.records.calls import CallResult, Usage

#: marks a missed description inside the prompts that carry it
PLACEHOLDER = "[titjudge estimate: description not yet written]"
#: the re-ask a validated call may need adds its prompt (`text_client.REASK`, about 40 tokens)
REASK_TOKENS = 48


@dataclass(frozen=True)
class Asked:
    """What a call under one key would send: its role, its kind, the request (or the text to
    embed) and the thinking tokens it may use on top of `max_tokens`."""

    role: str
    kind: Literal["text", "structured", "embedding"]
    request: GenerateRequest | None = None
    text: str | None = None
    thinking_cap: int = 0
    #: the prompt template the request was rendered from (its record: name, version, sha256)
    template: dict[str, str] | None = None
    #: a validated-object call whose answer other calls read: its type's `stand_in(text)`,
    #: a valid answer around `text` for an estimate to hand on (None: nothing reads it)
    stand_in: Callable[[str], Any] | None = None


@dataclass
class Miss:
    """One call the run would send: its input estimate, its output caps, and how much longer
    its input may be when the descriptions it carries come out at their cap."""

    model: str
    role: str
    kind: str
    tokens_in: int
    answer_cap: int
    thinking_cap: int
    #: input tokens beyond `tokens_in` when every placeholder is a description at its cap
    extra_in_max: int = 0
    #: a validated call may be asked once more with its first reply (`text_client._reask`)
    may_reask: bool = False
    #: the model's `price` option, if any (`models.core.prices.rates_for` reads it)
    price: Any = None
    #: sent as a batch job (`batch: true`): priced at the batch rates
    batch: bool = False


@dataclass
class Seen:
    """What the cached answers of one model in one role used, summed."""

    #: the cached answers that record their usage (the means are over these)
    answers: int = 0
    #: every call the cache answered, local models' (no usage recorded) too
    hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    thinking: int = 0

    def mean_out(self) -> float:
        return self.tokens_out / self.answers if self.answers else 0.0

    def mean_thinking(self) -> float:
        return self.thinking / self.answers if self.answers else 0.0


@dataclass
class EstimateProbe(CacheProbe):
    """See the module's notes. `misses` in the order first met; `seen` per (model, role)."""

    misses: dict[str, Miss] = field(default_factory=dict)
    seen: dict[tuple[str, str], Seen] = field(default_factory=dict)
    #: answer caps of text calls per (model, role): a placeholder at its cap, for `usd_max`
    _asked: dict[str, Asked] = field(default_factory=dict)
    _answers: dict[str, CallResult[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        CacheProbe.__init__(self)

    def note(self, key: str, request: Any) -> None:
        if isinstance(request, Asked):
            self._asked[key] = request

    def holds(self, client: Any) -> bool:
        """A backend whose answers are not cached because they cost nothing and are read
        here (`replay:`) answers for real: its stored description, not a placeholder, then
        keys the judge calls, as in the run."""
        return bool(client.backend.cacheable)

    def count(
        self, ledger: Usage, results: list[CallResult[Any]], *, model: str = "", role: str = ""
    ) -> None:
        """Hits that record usage tell what this model in this role writes."""
        for result in results:
            if not (result.cached and result.ok):
                continue
            seen = self.seen.setdefault((model, role), Seen())
            seen.hits += 1
            if result.tokens_out or result.tokens_in:
                seen.answers += 1
                seen.tokens_in += result.tokens_in
                seen.tokens_out += result.tokens_out
                seen.thinking += result.thinking_tokens or 0

    def miss(
        self, client: CallPipeline[Any], key: str, compute: ComputeOne | None = None
    ) -> CallResult[Any]:
        found = self._answers.get(key)
        if found is not None:  # asked before in this estimate: the run asks it once
            return found
        asked = self._asked.pop(key, None)
        if asked is None:  # a call kind that does not say what it sends: not estimated
            return super().miss(client, key)
        line = self._line(client, asked)
        self.misses[key] = line
        answer: CallResult[Any]
        if asked.kind == "text":
            text = placeholder(key, self.expected_answer(line))
            answer = CallResult(ok=True, value=text, raw=text)
        elif asked.stand_in is not None:  # its answer is read: the readers are counted too
            text = placeholder(key, self.expected_answer(line))
            answer = CallResult(ok=True, value=asked.stand_in(text), raw=text)
        else:
            answer = CallResult(ok=False, error="not cached (estimated)")
        self._answers[key] = answer
        return answer

    def expected_answer(self, line: Miss) -> int:
        """The answer tokens a miss is expected to write: the mean of the model's cached
        answers in its role (less their thinking), else its cap."""
        seen = self.seen.get((line.model, line.role))
        if seen is None or not seen.answers:
            return line.answer_cap
        return max(1, round(seen.mean_out() - seen.mean_thinking()))

    def _line(self, client: CallPipeline[Any], asked: Asked) -> Miss:
        spec = client.backend.spec
        if asked.kind == "embedding" or asked.request is None:
            tokens = text_tokens(asked.text or "")
            return Miss(
                client.model,
                asked.role,
                asked.kind,
                tokens,
                0,
                0,
                price=client.options.price,
                batch=client.options.batch,
            )
        request = asked.request
        line = Miss(
            client.model,
            asked.role,
            asked.kind,
            request_tokens(request, spec, 0),
            request.max_tokens,
            asked.thinking_cap,
            may_reask=asked.kind == "structured",
            price=client.options.price,
            batch=client.options.batch,
        )
        line.extra_in_max = self._placeholder_room(request)
        return line

    def _placeholder_room(self, request: GenerateRequest) -> int:
        """Tokens the placeholders in `request` would add at their describer's cap."""
        texts = [request.prompt, request.system or "", *(c for _, c in request.history)]
        room = 0
        for text in texts:
            start = text.find(PLACEHOLDER)
            while start >= 0:
                key = text[start + len(PLACEHOLDER) + 1 :].split(" ", 1)[0]
                source = self.misses.get(key)
                if source is not None:
                    room += max(0, source.answer_cap - self.expected_answer(source))
                start = text.find(PLACEHOLDER, start + 1)
        return room


def placeholder(key: str, tokens: int) -> str:
    """A stand-in text of about `tokens` tokens, named by the key it stands in for."""
    head = f"{PLACEHOLDER} {key} "
    fill = max(0, math.ceil(tokens * CHARS_PER_TOKEN) - len(head))
    return head + ("word " * (fill // 5 + 1))[:fill]


__all__ = ["PLACEHOLDER", "Asked", "EstimateProbe", "Miss", "Seen", "placeholder"]
