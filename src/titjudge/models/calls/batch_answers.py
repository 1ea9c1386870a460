"""How a batch job's replies reach the call that asked: through the very code an online
call runs (`ModelClient._generate`), so a batch answer is validated, re-asked and cached
exactly as an online one.

A computation handed a job's `answers` (`models.calls.batch.collect` passes them to the call's
`compute`, which passes them down to its send) looks its request's body up there (by
`body_hash`) instead of sending it: a reply there is returned as if the provider had just
answered, a line the provider failed is that failure, and a body with no answer yet (a
first request, or the re-ask of an invalid reply) raises `Deferred` carrying the body, which
the collector (`models.calls.batch.collect`) queues for the next job.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import weakref
from dataclasses import dataclass
from typing import Any

from titjudge.models.core.base import (
    EmbeddingBackend,
    GenerateRequest,
    Generation,
    MadeFor,
    PermanentError,
    TextBackend,
    mark_unbilled,
)
from titjudge.models.core.batch import Embedded
from titjudge.models.core.prices import Rates, reply_cost


def body_hash(body: dict[str, Any]) -> str:
    """A request body's identity: the sha256 of its canonical JSON."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Deferred(BaseException):  # noqa: N818  (not an error: passes the calls' `except Exception`)
    """The request's body has no batch answer yet: it goes into a batch job."""

    def __init__(self, body: dict[str, Any], sha: str):
        super().__init__(sha)
        self.body = body
        self.sha = sha
        #: the line's worst case at the batch price, reserved under `run.budget_usd` before
        #: the line goes into a job (set by the client that asked; 0 without a budget)
        self.worst_usd = 0.0
        #: what the call is made for (`GenerateRequest.made_for`): a refusal is counted by it
        self.made_for: MadeFor = "item"


@dataclass
class Answer:
    """A batch line's outcome: a reply, or the provider's reason for none."""

    generation: Generation | None = None
    error: str | None = None
    #: an embeddings line's reply
    embedded: Embedded | None = None


def line_hash(body: dict[str, Any], sample: int = 0) -> str:
    """A line's identity: its body's hash; a repeated sample's (`GenerateRequest.sample`)
    also its index, so k samples are k lines even where the provider takes no seed and
    their bodies are the same (one line would give every sample the same answer)."""
    return body_hash(body if not sample else {"body": body, "titjudge_sample": sample})


def take(body: dict[str, Any], answers: dict[str, Answer], sample: int = 0) -> Generation:
    """The reply to `body`; the provider's failure as a PermanentError (a batch line that
    failed is not billed); `Deferred` when the body has no answer yet."""
    sha = line_hash(body, sample)
    if sha not in answers:
        raise Deferred(body, sha)
    return _answer(answers[sha])


def _answer(found: Answer) -> Generation:
    if found.generation is None:
        raise mark_unbilled(PermanentError(found.error or "batch line failed"))
    return found.generation


#: per batch API (one per backend): a request's fingerprint -> its body's hash and output
#: cap, so reading a line's answer does not build its body again (litellm's
#: `return_raw_request` takes ~16 ms a line, mostly over the images' base64)
_BODIES: weakref.WeakKeyDictionary[Any, dict[str, tuple[str, Any]]] = weakref.WeakKeyDictionary()


def _fingerprint(request: GenerateRequest) -> str:
    """Every field of the request (what determines its body), its images by their hash."""
    parts: dict[str, Any] = {
        f.name: getattr(request, f.name) for f in dataclasses.fields(request) if f.name != "images"
    }
    parts["images"] = [image.sha256 for image in request.images]
    text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _output_cap(body: dict[str, Any]) -> Any:
    config = body.get("generationConfig") or {}  # Gemini's cap is in its generationConfig
    return (
        body.get("max_tokens")
        or body.get("max_completion_tokens")
        or config.get("max_output_tokens")
        or config.get("maxOutputTokens")
    )


def batch_reply(
    backend: TextBackend, rates: Rates | None, request: GenerateRequest, answers: dict[str, Answer]
) -> Generation:
    """The batch reply to `request`'s body as the backend builds it (`BatchAPI.body`), priced
    at half the model's own `price` where it has one (the providers' batch discount)."""
    api = backend.batch_api()
    if api is None:
        raise mark_unbilled(PermanentError(f"{backend.spec}: no batch API for this model"))
    memo = _BODIES.setdefault(api, {})
    fingerprint = _fingerprint(request)
    known = memo.get(fingerprint)
    if known is not None and known[0] in answers:  # its body was built when it was deferred
        sha, cap = known
        generation = _answer(answers[sha])
    else:
        try:
            body = api.body(request)
        except PermanentError as exc:
            raise mark_unbilled(exc) from None
        cap = _output_cap(body)
        memo[fingerprint] = (line_hash(body, request.sample), cap)
        generation = take(body, answers, request.sample)
    generation.max_tokens_sent = cap
    if rates is not None:
        full = reply_cost(rates, generation)  # unknown when the reply reports no usage
        generation.cost = None if full is None else full / 2
    return generation


def batch_embedding(
    backend: EmbeddingBackend, texts: list[str], answers: dict[str, Answer]
) -> Embedded:
    """The batch reply to the embeddings body the backend builds for `texts` (the online
    call's body); the provider's failure as an unbilled PermanentError; `Deferred` when the
    body has no answer yet."""
    api = backend.batch_api()
    if api is None:
        raise mark_unbilled(PermanentError(f"{backend.spec}: no batch API for this model"))
    try:
        body = api.embedding_body(texts)
    except PermanentError as exc:
        raise mark_unbilled(exc) from None
    sha = body_hash(body)
    found = answers.get(sha)
    if found is None:
        raise Deferred(body, sha)
    if found.embedded is None:
        raise mark_unbilled(PermanentError(found.error or "batch line failed"))
    return found.embedded


__all__ = [
    "Answer",
    "Deferred",
    "batch_embedding",
    "batch_reply",
    "body_hash",
    "line_hash",
    "take",
]
