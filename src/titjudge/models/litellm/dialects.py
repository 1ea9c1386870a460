"""Structured output's one home: how a JSON schema goes with a request, per server dialect.

Servers that speak OpenAI's chat API take a schema in different shapes (the facts, with their
sources, are in docs/research/server-dialects.md):

- `json_schema`: OpenAI's `response_format: {"type": "json_schema", "json_schema": {...}}`.
  OpenAI, Azure, and through litellm's translation Gemini and Anthropic; vLLM (since 0.5.5),
  SGLang, llama.cpp's `llama-server`, Ollama (0.5 and later).
- `json_object`: `response_format: {"type": "json_object", "schema": {...}}`, the schema
  turned into a grammar. llama-cpp-python's server, which refuses `json_schema` with HTTP 500
  and a request-validation body; `llama-server` takes it too.
- `json_value`: `response_format: {"type": "json_object", "value": {...}}`, the schema under
  `value`: Hugging Face TGI (since 1.4.3), which refuses the two shapes above with HTTP 422
  (its request does not deserialize: "missing field `value`").
- `structured_outputs`: vLLM's extra body `structured_outputs: {"json": {...}}` (0.10.2 and
  later).
- `guided_json`: vLLM's older extra body `guided_json: {...}` (before 0.12, which ignores it).
- `prompt`: no schema is sent; the judge's prompt asks for the JSON and the reply is
  validated (one re-ask quoting the error), as for every dialect.

`auto`, the default for a model at a custom `api_base`, learns the dialect: the first
structured request to an endpoint goes alone as `json_schema` (the others wait for its
answer, and only for its answer: the moment the endpoint took a dialect, every waiting
request is sent in it at once, none holding anything); a documented refusal of that shape
moves it to the next of `AUTO_ORDER` (or straight to the shape the refusal names: TGI's
"missing field `value`"), and what the endpoint took is kept per endpoint in the cache dir's
facts and said once. A known dialect is read from a dict, with no lock and no await: once
learnt, `auto` costs a request nothing. A later refusal (another server now at that URL)
learns again. A refused request costs nothing and is not counted by the model's breaker; any
other failure is the request's own, and the next waiting request learns.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, TypeVar

from titjudge.models.core.options import StructuredOutput
from titjudge.models.litellm.errors.lasting import body_text
from titjudge.safety import redact

log = logging.getLogger(__name__)

T = TypeVar("T")

Dialect = Literal[
    "json_schema", "json_object", "json_value", "structured_outputs", "guided_json", "prompt"
]

#: what each dialect sends, in the words the run record and `titjudge explain` use
DIALECTS: dict[str, str] = {
    "json_schema": 'response_format {"type": "json_schema", "json_schema": {name, schema, strict}}',
    "json_object": 'response_format {"type": "json_object", "schema": <schema>}',
    "json_value": 'response_format {"type": "json_object", "value": <schema>} (json_value: TGI)',
    "structured_outputs": 'extra body {"structured_outputs": {"json": <schema>}} (vLLM >= 0.10.2)',
    "guided_json": 'extra body {"guided_json": <schema>} (vLLM < 0.12)',
    "prompt": "no schema sent: the prompt asks for the JSON, the reply is validated",
}
#: the dialects `auto` tries, in order: OpenAI's shape, llama-cpp-python's, TGI's, then none
#: (vLLM's extra bodies are never guessed: vLLM takes `json_schema`, and a newer vLLM ignores
#: `guided_json` with HTTP 200, so a guess could not be checked)
AUTO_ORDER: tuple[Dialect, ...] = ("json_schema", "json_object", "json_value", "prompt")

#: a refusal of the request's structured-output shape: the error names response_format
#: (llama-cpp-python's 500 "('body', 'response_format', 'type') ... Input should be 'text' or
#: 'json_object'", llama-server's "response_format type must be one of", vLLM's and SGLang's
#: 400 validation errors, TGI's 422 "Failed to deserialize ... response_format"), or a
#: llama-server clash of a schema with its grammar
_REFUSED = re.compile(
    r"response_format|['\"]?json_schema['\"]? or ['\"]?grammar|json_schema and grammar",
    re.IGNORECASE,
)
_STATUSES = frozenset({400, 422, 500, 501})
#: the fact's key in the cache dir's facts (`CallCache.get_meta`)
FACT = "structured-output-dialect:"


def response_kwargs(
    dialect: Dialect, schema: dict[str, Any], name: str, strict: bool
) -> dict[str, Any]:
    """What `dialect` adds to a chat request to ask for JSON of `schema` (already in the
    provider's subset): a `response_format`, an `extra_body`, or nothing."""
    if dialect == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": strict},
            }
        }
    if dialect == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if dialect == "json_value":
        return {"response_format": {"type": "json_object", "value": schema}}
    if dialect == "structured_outputs":
        return {"extra_body": {"structured_outputs": {"json": schema}}}
    if dialect == "guided_json":
        return {"extra_body": {"guided_json": schema}}
    return {}


#: a refusal that names the shape the server wants: TGI's serde message for a
#: `response_format` without `value` (its schema's place), or for a type it does not know
#: whose expected list starts with its own `json` (docs/research/server-dialects.md, 5b)
_WANTS_VALUE = re.compile(r"missing field `value`|expected (?:one of )?`json`")


def named_by(why: str) -> Dialect | None:
    """The dialect a refusal (`refusal`'s line) asks for in so many words, if any."""
    return "json_value" if _WANTS_VALUE.search(why) else None


def refusal(exc: BaseException) -> str | None:
    """Why `exc` (a provider's error, as litellm raises it) is the server refusing the
    structured-output shape, in a line; None when it is anything else."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or status not in _STATUSES:
        return None
    body = body_text(exc)
    if not _REFUSED.search(body):
        return None
    said = " ".join(redact(str(getattr(exc, "message", None) or exc)).split())
    if not _REFUSED.search(said):  # the message leaves the body out (TGI's text/plain one)
        told = [line for line in body.splitlines() if _REFUSED.search(line)]
        said = f"{said}: {' '.join(redact(told[-1]).split())}"
    return f"HTTP {status}: {said[:300]}"


class Facts(Protocol):
    """Where what a run learnt is kept (`CallCache.get_meta` / `set_meta`)."""

    def get_meta(self, key: str) -> Any | None: ...

    def set_meta(self, key: str, value: Any) -> None: ...


def _complete(fact: dict[str, Any]) -> bool:
    """Whether every dialect tried before the one `fact` took was refused (or named past)."""
    dialect = fact["dialect"]
    if dialect not in AUTO_ORDER:
        return True
    refused = {r.get("dialect") for r in fact.get("refused") or [] if isinstance(r, dict)}
    earlier = AUTO_ORDER[: AUTO_ORDER.index(dialect)]
    named = {
        named_by(str(r.get("why", ""))) for r in fact.get("refused") or [] if isinstance(r, dict)
    }
    return all(d in refused or dialect in named for d in earlier)


class DialectMemory:
    """The dialect each endpoint took, kept in the cache dir's facts and shared by every
    backend of a hub (one endpoint may serve several models). At most one request per
    endpoint learns at a time; the others wait on its `asyncio.Event`, never on a lock that a
    sending request holds."""

    def __init__(self, facts: Facts | None = None, where: str | None = None):
        self.facts = facts
        #: where the facts are kept, as a user would look for them
        self.where = where
        self._known: dict[str, dict[str, Any]] = {}
        #: endpoint -> set when the request learning its dialect now is done, learnt or not
        self._learning: dict[str, asyncio.Event] = {}
        self._said: set[str] = set()

    def known(self, endpoint: str) -> dict[str, Any] | None:
        """{dialect, refused, learned} for `endpoint`, from this process or an earlier run.
        A kept fact that skipped a dialect `AUTO_ORDER` now tries before the one it took
        (learnt by an older titjudge: `prompt` before `json_value` existed) is learnt again."""
        found = self._known.get(endpoint)
        if found is None and self.facts is not None:
            kept = self.facts.get_meta(FACT + endpoint)
            if isinstance(kept, dict) and kept.get("dialect") in DIALECTS and _complete(kept):
                self._known[endpoint] = found = kept
        return found

    def dialect(self, endpoint: str) -> Dialect | None:
        found = self.known(endpoint)
        return found["dialect"] if found else None

    def learning(self, endpoint: str) -> asyncio.Event | None:
        """The event of the request learning `endpoint`'s dialect now, if one is."""
        return self._learning.get(endpoint)

    def start_learning(self, endpoint: str) -> asyncio.Event:
        """This request learns `endpoint`'s dialect: later ones wait on the event returned."""
        event = self._learning[endpoint] = asyncio.Event()
        return event

    def done_learning(self, endpoint: str, event: asyncio.Event) -> None:
        """The learning request is done (learnt, or failed its own way): its waiters go."""
        if self._learning.get(endpoint) is event:
            del self._learning[endpoint]
        event.set()

    def learn(self, endpoint: str, dialect: Dialect, refused: list[tuple[str, str]]) -> None:
        """`endpoint` took `dialect` after refusing `refused` ([(dialect, why)]): kept, and
        said once per endpoint when it is not OpenAI's shape."""
        entry = {
            "dialect": dialect,
            "refused": [{"dialect": d, "why": why} for d, why in refused],
            "learned": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self._known[endpoint] = entry
        if self.facts is not None:
            self.facts.set_meta(FACT + endpoint, entry)
        if refused and endpoint not in self._said:
            self._said.add(endpoint)
            kept = f"; kept in {self.where}" if self.where else ""
            log.warning(
                "%s refused %s (%s); it takes %s, used from now on%s "
                "(set structured_output on the model to choose)",
                endpoint,
                " and ".join(d for d, _ in refused),
                refused[-1][1],
                DIALECTS[dialect],
                kept,
            )


async def send_learning(
    memory: DialectMemory,
    endpoint: str,
    send: Callable[[Dialect], Awaitable[T]],
) -> T:
    """`send` in the dialect `endpoint` takes, learning it first when unknown (see the module
    docstring): a refusal moves to the next dialect of `AUTO_ORDER`; any other error is
    raised as it came. A request that waits for another to learn waits for that request's
    answers only, then sends on its own."""
    known = memory.dialect(endpoint)
    now_refused = ""
    if known is not None:
        try:
            return await send(known)
        except Exception as exc:
            now_refused = refusal(exc) or ""
            if not now_refused:
                raise
    while True:
        settled = memory.dialect(endpoint)
        if settled is not None and settled != known:  # learnt while this one waited
            return await send(settled)
        event = memory.learning(endpoint)
        if event is None:
            break
        await event.wait()  # then what it learnt is sent, or (it failed) one waiter learns
    event = memory.start_learning(endpoint)
    try:
        return await _learn(memory, endpoint, send, known, now_refused)
    finally:
        memory.done_learning(endpoint, event)


async def _learn(
    memory: DialectMemory,
    endpoint: str,
    send: Callable[[Dialect], Awaitable[T]],
    known: Dialect | None,
    now_refused: str,
) -> T:
    """The learning request: each dialect of `AUTO_ORDER` in turn (the one `known` that was
    just refused left out) until the endpoint takes one, which is kept."""
    refused: list[tuple[str, str]] = []
    order = [d for d in AUTO_ORDER if d != known] if known is not None else list(AUTO_ORDER)
    last: Exception | None = None
    while order:
        dialect = order.pop(0)
        try:
            answer = await send(dialect)
        except Exception as exc:
            why = refusal(exc)
            if why is None:
                raise
            refused.append((dialect, why))
            last = exc
            named = named_by(why)
            if named in order:  # the refusal says which shape it wants: that one next
                order.remove(named)
                order.insert(0, named)
            continue
        if known is not None:
            refused.insert(0, (known, f"taken before, refused now: {now_refused}"))
        memory.learn(endpoint, dialect, refused)
        return answer
    assert last is not None
    raise last


def describe(setting: str, learned: dict[str, Any] | None) -> str:
    """The run record's words for a model's structured output."""
    if setting != "auto":
        return DIALECTS[setting]
    if learned is None:
        return "auto: learned from the endpoint's first structured request (not sent yet)"
    refused = learned.get("refused") or []
    why = "; ".join(f"{r['dialect']} refused ({r['why']})" for r in refused)
    return f"auto: {DIALECTS[learned['dialect']]}" + (f"; {why}" if why else "")


__all__ = [
    "AUTO_ORDER",
    "DIALECTS",
    "Dialect",
    "DialectMemory",
    "StructuredOutput",
    "describe",
    "refusal",
    "response_kwargs",
    "send_learning",
]
