"""A run's failures at a glance: grouped by role (describer, a judge, the image), model and
kind of reason, with counts and one full reason each, and the models stopped for the run.

The run writes this into summary.json (`failures`), and the terminal shows what it reads back
from there (`report.run_summary.load_summary`; the types are in `records.summary`), the same at the end of `titjudge run` and of
every ablation row, on a terminal or not:

    describer litellm:openai/x: 200 x connection refused (http://127.0.0.1:9/v1), 195 not sent
      e.g. gave up after 6 attempts: connection refused (http://127.0.0.1:9/v1): ...
    stopped: litellm:openai/x after 5 requests in a row failed with connection refused (...)

A reason's kind is read from its text, which the call layer and the judges begin with what
went wrong (`quota exhausted: ...`, `truncated: ...`; a reason that will not heal leads with
its kind, e.g. `401 unauthorized (the API key was refused): ...`); a text that fits no known
kind is grouped by its first clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from titjudge.records import ItemResult
from titjudge.records.summary import FailureGroup, Failures, StoppedModel

#: how a failure record of a stopped model's unsent call begins (`models.calls.breaker`)
NOT_SENT = "not sent: "
#: the longest example reason kept
EXAMPLE_CHARS = 300

#: prefixes that say how a call failed, not why: stripped (repeatedly) before the kind is read
_RETRIED = re.compile(r"^(gave up after \d+ attempts?: |re-ask failed: |re-ask )")
#: (pattern, kind): the first that matches the reason names its kind (a callable: from the match)
_KINDS: tuple[tuple[re.Pattern[str], str | None], ...] = tuple(
    (re.compile(pattern, flags), kind)
    for pattern, flags, kind in (
        (r"^quota exhausted", 0, "quota exhausted"),
        (r"^(connection refused|DNS lookup failed|TLS handshake failed)( \([^)]*\))?", 0, None),
        (r"^missing client package \S+", 0, None),
        (r"^(401 unauthorized|403 forbidden|404 model not found)( \([^)]*\))?", 0, None),
        (r"^missing API key", 0, "missing API key"),
        (r"context length exceeded", re.I, "context length exceeded"),
        (r"RateLimitError|\b429\b", 0, "rate limited (429)"),
        (r"^no reply within|Timeout", 0, "timeout"),
        (r"InternalServerError|ServiceUnavailable|BadGateway|\b50[0-9]\b", 0, "server error (5xx)"),
        (r"APIConnectionError|Connection error|Cannot connect", 0, "connection error"),
        (r"^truncated", 0, "truncated at the token limit"),
        (r"^blocked", 0, "blocked by the provider"),
        (r"^empty reply", 0, "empty reply"),
        (r"invalid output|^the reply (is empty|contains no JSON)", 0, "invalid output"),
        (r"^internal error", 0, "internal error"),
        (r"BadRequestError|\b400\b", 0, "400 bad request"),
    )
)
_IMAGE_KINDS = (
    (re.compile(r"no such file|not found|does not exist", re.I), "image file missing"),
    (re.compile(r"decode|identify|truncated|corrupt|broken", re.I), "image cannot be decoded"),
)


def reason_kind(reason: str) -> str:
    """The kind of a failure's reason, in a few words (see the module docstring)."""
    text = reason.strip()
    while (stripped := _RETRIED.sub("", text, count=1)) != text:
        text = stripped
    if text.startswith(NOT_SENT):
        found = re.search(r" failed with (.*?); a re-run", text)
        return found.group(1) if found else "not sent"
    if text.startswith("no description: "):
        inner = text.removeprefix("no description: ")
        why = "the image could not be read" if inner.startswith("image: ") else "describer failed"
        return f"no description ({why})"
    for pattern, kind in _KINDS:
        match = pattern.search(text)
        if match:
            return kind if kind is not None else match.group(0)
    first = text.split(": ", 1)[0]
    return first if len(first) <= 60 else first[:57] + "..."


def image_kind(error: str) -> str:
    for pattern, kind in _IMAGE_KINDS:
        if pattern.search(error):
            return kind
    return "image cannot be read"


def failure_summary(
    results: Iterable[ItemResult],
    describer_model: str | None,
    judge_models: Mapping[str, str | None],
    stopped: Iterable[StoppedModel] = (),
) -> Failures:
    """The run's failures grouped (see `Failures`): per item, an image that could not be read,
    else a failed description; each failed judge outcome (a fallback-scored one included:
    its own judge still failed)."""
    groups: dict[tuple[str, str | None, str], FailureGroup] = {}

    def add(role: str, model: str | None, kind: str, reason: str) -> None:
        key = (role, model, kind)
        group = groups.get(key)
        if group is None:
            example = " ".join(reason.split())
            if len(example) > EXAMPLE_CHARS:
                example = example[: EXAMPLE_CHARS - 3] + "..."
            group = groups[key] = FailureGroup(
                role=role, model=model, kind=kind, count=0, example=example
            )
        group.count += 1
        group.not_sent += _RETRIED.sub("", reason).startswith(NOT_SENT)

    for result in results:
        if result.image_error:
            add("image", None, image_kind(result.image_error), result.image_error)
        elif result.described.failed:
            reason = result.described.error or "failed"
            add("describer", describer_model, reason_kind(reason), reason)
        for outcome in result.outcomes:
            if outcome.status in ("failed", "fallback") and outcome.error:
                model = judge_models.get(outcome.variant)
                add(outcome.variant, model, reason_kind(outcome.error), outcome.error)
    ordered = sorted(groups.values(), key=lambda g: (-g.count, g.role, g.kind))
    return Failures(groups=ordered, stopped=list(stopped))


__all__ = [
    "failure_summary",
    "image_kind",
    "reason_kind",
]
