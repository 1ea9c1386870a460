"""Each provider's documented byte limits on images, keyed by litellm provider (the model id's
prefix: `anthropic/claude-...`, `vertex_ai/gemini-...`), for the call layer to fit images
within before sending (`models.core.image_limit`). A provider not listed (a self-hosted
vLLM, a gateway) has no documented limit here, so only `max_image_pixels` bounds its images.

Every figure counts base64 bytes (what the JSON body carries), the stricter reading wherever
a doc does not say whether it means the file or its encoding; where docs disagree the
stricter figure is kept, and the row says so. "MB" is read as the smaller of 10^6 and 2^20
unless an error body shows the exact byte count.

| provider | per image | per request | source |
|---|---|---|---|
| anthropic | 5 MB = 5,242,880 B | 32 MB | Anthropic vision + errors docs; error body "image exceeds 5 MB maximum: 15908784 bytes > 5242880 bytes". Newer docs say 10 MB: stricter 5 MB kept |
| vertex_ai | 7 MB = 7,000,000 B inline | 20 MB | Vertex AI image understanding ("Maximum file size per file for inline data ... 7 MB"); Vertex AI in Firebase "maximum total request size is 20 MB" (stricter, kept) |
| gemini | - | 20 MB = 20,000,000 B | Gemini API image understanding ("total request size less than 20MB" inline); a newer page says 100 MB: stricter 20 MB kept |
| openai | 20 MB = 20,000,000 B | 50 MB = 50,000,000 B | OpenAI images-vision guide ("Up to 50 MB total payload size per request"; a 2026 page says 512 MB, but 400 "exceeds the allowed limit of 50MB" is still measured); GPT-4V FAQ "restricted to 20MB per image" |
| azure | 20 MB = 20,971,520 B | - | Azure OpenAI GPT-4 vision ("maximum size for input images is restricted to 20 MB"; error text "cannot exceed 20971520 bytes") |
| bedrock | 3.75 MB = 3,750,000 B | - | Bedrock Converse Message API reference ("no more than 3.75 MB, 8000 px, and 8000 px") |

Pixel limits (Anthropic and Bedrock 8000 px per side) are already met: the loader bounds every
image to 4096 px (`records.images.MAX_SIDE`).
"""

from __future__ import annotations

from typing import Any

from titjudge.models.core.image_limit import ImageLimit

_ANTHROPIC = (
    "https://docs.anthropic.com/en/docs/build-with-claude/vision; "
    "https://docs.claude.com/en/api/errors (request_too_large: 32 MB); "
    "observed 400: https://github.com/anthropics/claude-code/issues/10612"
)
_VERTEX = (
    "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/multimodal/image-understanding; "
    "https://firebase.google.com/docs/vertex-ai/input-file-requirements (20 MB per request)"
)
_GEMINI = "https://ai.google.dev/gemini-api/docs/image-understanding (inline data: under 20 MB per request)"
_OPENAI = (
    "https://platform.openai.com/docs/guides/images-vision (50 MB per request; 20 MB per image)"
)
_AZURE = "https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/gpt-with-vision"
_BEDROCK = "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html"

IMAGE_LIMITS: dict[str, ImageLimit] = {
    "anthropic": ImageLimit("anthropic", 5_242_880, 32_000_000, _ANTHROPIC),
    "vertex_ai": ImageLimit("vertex_ai", 7_000_000, 20_000_000, _VERTEX),
    "vertex_ai_beta": ImageLimit("vertex_ai_beta", 7_000_000, 20_000_000, _VERTEX),
    "gemini": ImageLimit("gemini", None, 20_000_000, _GEMINI),
    "openai": ImageLimit("openai", 20_000_000, 50_000_000, _OPENAI),
    "azure": ImageLimit("azure", 20_971_520, None, _AZURE),
    "bedrock": ImageLimit("bedrock", 3_750_000, None, _BEDROCK),
}

#: bare model names litellm routes without a prefix (litellm's provider lookup): OpenAI's
#: chat models, Anthropic's Claude, and Gemini on Vertex AI
_BARE = (
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude-", "anthropic"),
    ("gemini-", "vertex_ai"),
)


def provider_of(model_id: str, params: dict[str, Any] | None = None) -> str | None:
    """The litellm provider serving `model_id`: `custom_llm_provider` when set, else the id's
    prefix, else the provider litellm gives a bare name; None when it cannot tell."""
    custom = (params or {}).get("custom_llm_provider")
    if isinstance(custom, str) and custom:
        return custom
    prefix, slash, _ = model_id.partition("/")
    if slash:
        return prefix
    return next((provider for start, provider in _BARE if model_id.startswith(start)), None)


def image_limit_for(model_id: str, params: dict[str, Any] | None = None) -> ImageLimit | None:
    """The documented byte limits of the provider serving `model_id`, or None."""
    provider = provider_of(model_id, params)
    return IMAGE_LIMITS.get(provider) if provider is not None else None


__all__ = ["IMAGE_LIMITS", "image_limit_for", "provider_of"]
