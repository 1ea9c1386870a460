"""A request's tokens estimated before it is sent, for a model's `tpm` budget.

Only the estimate is charged at the start; the reply's reported usage (prompt + completion
tokens) replaces it once the reply arrives (`limits.Grant.settle`), so the estimate needs to be
cheap and on the safe side rather than exact. Nothing here loads a tokenizer.

- text (prompt, system, earlier turns, the JSON schema asked for): one token per 3.5
  characters (providers quote about 4 characters per token of English; 3.5 leaves room for
  punctuation-heavy text), plus 4 per message and 3 that prime the reply (OpenAI cookbook,
  "How to count tokens with tiktoken");
- images: the provider's documented cost. Gemini: 258 tokens for an image with both sides at
  most 384 px, else 258 per 768x768 tile ("Understand and count tokens", ai.google.dev/gemini-
  api/docs/tokens). Others, OpenAI's high-detail formula: scaled to fit 2048x2048, then its
  shorter side to 768 px, 85 tokens + 170 per 512 px tile (OpenAI vision guide, "Calculating
  costs"); it is the larger of the two for most sizes, so it also stands for providers that
  publish none;
- the reply: the output cap sent (`max_tokens`, plus any thinking budget), reserved in full.
"""

from __future__ import annotations

import json
import math

from titjudge.models.core.base import GenerateRequest
from titjudge.records.image_input import ImageInput
from titjudge.records.spec import ModelSpec

CHARS_PER_TOKEN = 3.5
MESSAGE_TOKENS = 4
REPLY_PRIMER_TOKENS = 3
#: what an image costs when its size cannot be read (OpenAI's 2048x2048 -> 768x768: 4 tiles)
UNKNOWN_IMAGE_TOKENS = 85 + 170 * 4


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def image_tokens(image: ImageInput, provider: str) -> int:
    """The image's input tokens as `provider` documents them (see the module docstring)."""
    try:  # a deferred image (not read yet) knows its size from an earlier load
        width, height = image.size
    except Exception:
        return UNKNOWN_IMAGE_TOKENS
    if provider in ("gemini", "vertex_ai"):
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)
    return openai_image_tokens(width, height)


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI high detail: fit 2048x2048, shorter side to 768, 85 + 170 per 512 px tile."""
    scale = min(1.0, 2048 / max(width, height))
    scale *= min(1.0, 768 / (min(width, height) * scale))
    return 85 + 170 * math.ceil(width * scale / 512) * math.ceil(height * scale / 512)


def request_tokens(request: GenerateRequest, spec: ModelSpec, output_cap: int | None = None) -> int:
    """Estimated prompt tokens of `request` plus the output it may use (`output_cap`, else
    `max_tokens`)."""
    provider = spec.model_id.split("/", 1)[0] if "/" in spec.model_id else spec.model_id
    texts = [request.prompt, request.system or "", *(content for _, content in request.history)]
    if request.json_schema is not None:
        texts.append(json.dumps(request.json_schema))
    messages = 1 + (request.system is not None) + len(request.history)
    total = sum(text_tokens(text) for text in texts) + MESSAGE_TOKENS * messages
    total += REPLY_PRIMER_TOKENS
    total += sum(image_tokens(image, provider) for image in request.images)
    return total + (output_cap if output_cap is not None else request.max_tokens)


def embedding_tokens(texts: list[str]) -> int:
    """Estimated input tokens of an embedding request (embeddings have no output tokens)."""
    return sum(text_tokens(text) for text in texts)
