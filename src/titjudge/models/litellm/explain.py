"""The exact request a `litellm:` model would be sent, worked out without sending it.

A model sent direct (`models.litellm.wire`) is shown as the direct path encodes it: its URL,
headers and the bytes of its body. Otherwise titjudge's backend builds the arguments it passes
to `litellm.acompletion`, and litellm's own request transformation (`litellm.utils.return_raw_request`, which stops before the network
call; litellm calls it beta and tests it for chat completions) turns them into the provider's
URL, headers and JSON body (for OpenAI-compatible providers litellm reports the base URL and
no headers: the OpenAI SDK posts to `<base>/chat/completions` with a bearer key, shown as
such). Keys never appear: litellm is handed a stand-in key, and every
credential header is shown as `<redacted>`. Images are summarized (`<image/png 512x512,
84 KB>`), not printed.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.backend import LiteLLMBackend, setup_problems
from titjudge.models.litellm.dialects import AUTO_ORDER, DialectMemory
from titjudge.models.litellm.raw import raw_request
from titjudge.records.spec import ModelSpec

#: request headers that carry credentials
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
REDACTED = "<redacted>"
_ENDPOINT = re.compile(r"(/chat/completions|/messages|:generateContent|:streamGenerateContent)/?$")


@dataclass
class Explained:
    """One request as the provider would receive it."""

    url: str | None
    headers: dict[str, str]
    body: Any
    #: what stops the call as configured (a key not set), or litellm's refusal to build it
    notes: list[str] = field(default_factory=list)


def image_summary(mime: str, size: tuple[int, int], nbytes: int) -> str:
    return f"<{mime} {size[0]}x{size[1]}, {max(1, round(nbytes / 1024))} KB>"


def explain_request(
    spec: ModelSpec,
    options: ModelOptions,
    request: GenerateRequest,
    memory: DialectMemory | None = None,
) -> Explained:
    """The request `spec` would be sent for `request`; needs no key. `memory`: what `auto`
    endpoints took (the run's cache dir), so the schema is shown in the dialect a run sends."""
    backend = LiteLLMBackend(spec, options, offline=True)
    if memory is not None:
        backend.use_memory(memory)
    notes = [
        f"{problem} (explain needs none; a run that must call {spec} does)"
        for problem in setup_problems(
            spec, options.api_base, options.api_key_env, backend.settings.params
        )
    ]
    if request.json_schema is not None and backend.settings.structured == "auto":
        notes.append(_auto_note(backend))
    if backend.wire is not None:  # the direct path's own bytes
        posted, sent, content = backend.wire.request(backend.request_kwargs(request))
        raw: dict[str, Any] = {
            "raw_request_api_base": posted,
            "raw_request_headers": sent,
            "raw_request_body": json.loads(content),
        }
    else:
        raw = raw_request(backend, request)
    error = raw.get("error")
    if error:
        notes.append(f"litellm would not build this request: {str(error).splitlines()[0]}")
    images = {
        base64.b64encode(image.data).decode("ascii"): image_summary(
            image.mime, image.size, len(image.data)
        )
        for image in request.images
    }
    headers = {
        name: REDACTED if name.lower() in SECRET_HEADERS else str(value)
        for name, value in (raw.get("raw_request_headers") or {}).items()
    }
    url = raw.get("raw_request_api_base")
    if backend.wire is not None:  # the key is read when a run sends: shown as it would go
        headers.setdefault("Authorization", f"Bearer {REDACTED}")
    elif url and not _ENDPOINT.search(url):
        # OpenAI-compatible providers: litellm reports the base URL, and the OpenAI SDK it
        # calls posts to <base>/chat/completions with the key as a bearer token
        url = url.rstrip("/") + "/chat/completions"
        headers.setdefault("Authorization", f"Bearer {REDACTED}")
    return Explained(
        url=url,
        headers=headers,
        body=_summarized(_on_the_wire(raw.get("raw_request_body")), images),
        notes=notes,
    )


def _on_the_wire(body: Any) -> Any:
    """The JSON body as it leaves: the OpenAI SDK merges `extra_body` into the body's top
    level (an empty one adds nothing), so it is shown merged, as the server receives it."""
    if not isinstance(body, dict) or not isinstance(body.get("extra_body"), dict):
        return body
    merged = {key: value for key, value in body.items() if key != "extra_body"}
    merged.update(body["extra_body"])
    return merged


def _auto_note(backend: LiteLLMBackend) -> str:
    """What `auto` sends this endpoint's schema as, and why."""
    learned = backend.dialects.known(backend.endpoint)
    if learned is None:
        order = ", then ".join(AUTO_ORDER)
        return (
            f"structured_output auto: {backend.endpoint} has not been asked yet; its first "
            f"request goes as shown ({AUTO_ORDER[0]}) and a refusal moves it to {order}"
        )
    return (
        f"structured_output auto: {backend.endpoint} took {learned['dialect']} "
        f"(learnt {learned.get('learned', 'in an earlier run')}), shown"
    )


def _summarized(node: Any, images: dict[str, str]) -> Any:
    """`node` with every image's base64 (bare or in a data URI) replaced by its summary."""
    if isinstance(node, dict):
        return {key: _summarized(value, images) for key, value in node.items()}
    if isinstance(node, list):
        return [_summarized(value, images) for value in node]
    if isinstance(node, str):
        if node in images:
            return images[node]
        if node.startswith("data:") and "," in node:
            found = images.get(node.split(",", 1)[1])
            if found is not None:
                return found
    return node


__all__ = ["Explained", "explain_request", "image_summary"]
