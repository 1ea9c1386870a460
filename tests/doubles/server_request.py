"""The fake OpenAI server's vocabulary: the parsed chat request, replies and faults.

`ChatRequest` exposes what a responder needs (model, messages, the last user text, the
images with the sha256 of their decoded bytes, response_format / JSON schema, sampling
and logprob settings, and how many times this exact body has been seen). A `Reply` is
text, JSON or a `Fault`; content faults (`fenced`, `invalid_schema`, `prose`) corrupt a
good reply the way real models do, HTTP faults replace the response.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, TypeAlias

from doubles.server_dialects import schema_of
from doubles.server_text import score_field, score_range
from titjudge.errors import ConfigError, did_you_mean

HTTP_FAULTS = (
    "429",
    "500",
    "503",
    "400",
    "401",
    "404",
    "context_length",
    "timeout",
    "reset",
    "malformed",
    "no_choices",
)
CONTENT_FAULTS = ("fenced", "invalid_schema", "prose")
FAULT_KINDS = HTTP_FAULTS + CONTENT_FAULTS
INVALID_SCHEMA_VARIANTS = ("missing_field", "out_of_range")


class BadRequest(Exception):
    """The request cannot be answered as sent; the server answers 400 invalid_request_error."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.param = param
        self.code = code


class ScriptExhausted(RuntimeError):
    """A scripted responder ran out of replies; the server answers 500 naming the cause."""


@dataclass(frozen=True)
class Fault:
    """One injected failure. HTTP kinds replace the response; content kinds corrupt a 200 reply.

    `retry_after` (429) and `delay` (timeout: seconds to stall before answering) default to
    the server's settings; `variant` picks how `invalid_schema` breaks the JSON.
    """

    kind: str
    retry_after: float | None = None
    delay: float | None = None
    message: str | None = None
    variant: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ConfigError(
                f"unknown fault kind {self.kind!r}{did_you_mean(self.kind, FAULT_KINDS)}; "
                f"known: {', '.join(FAULT_KINDS)}"
            )
        if self.variant is not None and self.variant not in INVALID_SCHEMA_VARIANTS:
            raise ConfigError(
                f"unknown invalid_schema variant {self.variant!r}; known: {', '.join(INVALID_SCHEMA_VARIANTS)}"
            )

    @property
    def is_http(self) -> bool:
        return self.kind in HTTP_FAULTS


@dataclass(frozen=True)
class TokenLogprob:
    """A scripted log-probability for one generated token, with its top alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Reply:
    """One answer: text `content`, or JSON `data` (serialised), or a `fault`.

    `logprobs`, when given, is returned verbatim to requests that ask for log-probabilities;
    otherwise the server derives them from the content (see `server_wire.default_logprobs`).
    `delay` adds seconds of latency to this reply only. `model`, when given, is the model the
    reply says answered (the body's `model`, as a provider that re-routes a retired model
    says); by default the reply names the model asked for. `cached_tokens`, when given, is
    reported as `usage.prompt_tokens_details.cached_tokens` (of the prompt tokens, those served
    from the provider's prompt cache: OpenAI API reference, "The chat completion object",
    https://platform.openai.com/docs/api-reference/chat/object).
    """

    content: str | None = None
    data: Any = None
    fault: Fault | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    finish_reason: str = "stop"
    delay: float = 0.0
    model: str | None = None
    cached_tokens: int | None = None

    @property
    def text(self) -> str:
        """The assistant message text this reply puts on the wire."""
        if self.content is not None:
            return self.content
        if self.data is not None:
            return json.dumps(self.data, ensure_ascii=False)
        return ""


ReplyLike: TypeAlias = "Reply | Fault | str | dict[str, Any] | list[Any]"
Responder: TypeAlias = "Callable[[ChatRequest], ReplyLike | Awaitable[ReplyLike]]"


def as_reply(value: Any) -> Reply:
    """Coerce what a responder or `script()` gives into a `Reply`: str text, dict/list JSON, Fault."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, Fault):
        return Reply(fault=value)
    if isinstance(value, str):
        return Reply(content=value)
    if isinstance(value, dict | list):
        return Reply(data=value)
    raise TypeError(
        f"a responder must return Reply, Fault, str, dict or list, not {type(value).__name__}"
    )


# --------------------------------------------------------------------------- the request


@dataclass(frozen=True)
class ImagePart:
    """An image in the conversation. `sha256` hashes the decoded bytes of a data URI (the
    same hash `ImageInput.sha256` gives), or the URL text for a remote URL (`data` None)."""

    url: str
    mime: str | None
    data: bytes | None
    sha256: str


@dataclass
class ChatRequest:
    """A parsed `/v1/chat/completions` body. `attempt` counts identical bodies seen so far (1 = first)."""

    body: dict[str, Any]
    attempt: int = 1
    body_hash: str = ""
    #: whose dialect the request is read in (`doubles.server_dialects`)
    server: str = "openai"
    _parts: list[tuple[str, str, list[ImagePart]]] = field(
        default_factory=list, init=False, repr=False
    )

    def __post_init__(self) -> None:
        messages = self.body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("'messages' must be a non-empty array", param="messages")
        if not isinstance(self.body.get("model"), str) or not self.body["model"]:
            raise BadRequest("you must provide a model parameter", param="model")
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or "role" not in message:
                raise BadRequest(
                    f"messages[{index}] must be an object with a 'role'",
                    param=f"messages.[{index}]",
                )
            text, images = _flatten(message.get("content"), index)
            self._parts.append((str(message["role"]), text, images))

    @property
    def model(self) -> str:
        return str(self.body["model"])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body["messages"])

    @cached_property
    def text(self) -> str:
        """Text of the last user message (text parts joined by newlines)."""
        users = [text for role, text, _ in self._parts if role == "user"]
        return users[-1] if users else ""

    @cached_property
    def all_text(self) -> str:
        """Every message's text, in order, joined by blank lines."""
        return "\n\n".join(text for _, text, _ in self._parts if text)

    @cached_property
    def images(self) -> list[ImagePart]:
        return [image for _, _, images in self._parts for image in images]

    @property
    def image_sha256(self) -> list[str]:
        return [image.sha256 for image in self.images]

    @property
    def response_format(self) -> dict[str, Any] | None:
        value = self.body.get("response_format")
        return value if isinstance(value, dict) else None

    @property
    def json_schema(self) -> dict[str, Any] | None:
        """The schema the request asks the reply to follow, where the server reads one
        (`response_format.json_schema.schema` on OpenAI's; `doubles.server_dialects`)."""
        return schema_of(self.server, self.body)

    @property
    def temperature(self) -> float | None:
        value = self.body.get("temperature")
        return float(value) if isinstance(value, int | float) else None

    @property
    def max_tokens(self) -> int | None:
        value = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        return int(value) if isinstance(value, int) else None

    @property
    def logprobs(self) -> bool:
        return bool(self.body.get("logprobs"))

    @property
    def top_logprobs(self) -> int:
        value = self.body.get("top_logprobs")
        return int(value) if isinstance(value, int) else 0

    @property
    def n(self) -> int:
        value = self.body.get("n")
        return int(value) if isinstance(value, int) and value > 0 else 1

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


def _flatten(content: Any, index: int) -> tuple[str, list[ImagePart]]:
    """A message's text parts (joined) and its images, from str or OpenAI content parts."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise BadRequest(f"messages[{index}].content must be a string or an array of parts")
    texts: list[str] = []
    images: list[ImagePart] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "image_url":
            ref = part.get("image_url")
            url = ref.get("url") if isinstance(ref, dict) else ref
            if not isinstance(url, str) or not url:
                raise BadRequest(f"messages[{index}]: image_url part without a url")
            images.append(_image_part(url, index))
        else:
            raise BadRequest(f"messages[{index}]: unsupported content part type {kind!r}")
    return "\n".join(texts), images


def _image_part(url: str, index: int) -> ImagePart:
    if not url.startswith("data:"):
        return ImagePart(
            url=url, mime=None, data=None, sha256=hashlib.sha256(url.encode()).hexdigest()
        )
    header, sep, payload = url.partition(",")
    if not sep or not header.endswith(";base64"):
        raise BadRequest(f"messages[{index}]: image data URI must be 'data:<mime>;base64,<data>'")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(
            f"messages[{index}]: image data URI is not valid base64", code="invalid_image"
        ) from None
    return ImagePart(
        url=url, mime=header[5:-7] or None, data=data, sha256=hashlib.sha256(data).hexdigest()
    )


# --------------------------------------------------------------------------- content faults

_PROSE = (
    "I compared the two texts carefully. They share several elements of subject and setting, "
    "but the description leaves out some details and adds others, so overall I would call them "
    "moderately similar rather than identical."
)


def apply_content_fault(fault: Fault, reply: Reply, schema: dict[str, Any] | None) -> Reply:
    """Corrupt a good reply the way real models do: fences and chatter, broken schema, or no JSON.

    `invalid_schema` drops the first required field present (variant 'missing_field', the
    default) or pushes the score past the schema's maximum (variant 'out_of_range').
    """
    if fault.kind == "prose":
        return replace(reply, content=_PROSE, data=None, logprobs=None)
    if fault.kind == "fenced":
        payload = (
            json.dumps(reply.data, indent=2, ensure_ascii=False)
            if reply.data is not None
            else reply.text
        )
        text = f"Sure! Here is my assessment.\n\n```json\n{payload}\n```\n\nLet me know if you need more detail."
        return replace(reply, content=text, data=None, logprobs=None)
    data = reply.data if isinstance(reply.data, dict) else _as_object(reply.text)
    broken = dict(data)
    name = score_field(schema, broken)
    if fault.variant == "out_of_range" and name is not None:
        lo, hi = score_range(schema, name)
        beyond = hi + (hi - lo) + 1
        broken[name] = int(beyond) if beyond.is_integer() else beyond
    else:
        required = [k for k in (schema or {}).get("required", []) if k in broken]
        victim = required[0] if required else (name or next(iter(broken), None))
        if victim is not None:
            broken.pop(victim)
    return replace(reply, content=None, data=broken, logprobs=None)


def _as_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {"reason": text}
    return value if isinstance(value, dict) else {"value": value}


def fault_variant(unit: float) -> str:
    """Which invalid_schema variant a rate-drawn fault uses, from a uniform draw."""
    return INVALID_SCHEMA_VARIANTS[
        min(int(unit * len(INVALID_SCHEMA_VARIANTS)), len(INVALID_SCHEMA_VARIANTS) - 1)
    ]
