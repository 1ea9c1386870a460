"""Reply shapes whose reason must survive to the failure record: a model's refusal, a
content filter's 400, an answer left only in a reasoning field, an error inside a 200
reply's choice. Each builder cites where its shape is documented; they are served by the
stand-in in provider_server.py (OpenAI-compatible route)."""

from __future__ import annotations

from typing import Any

from provider_server import Reply, openai_ok

REFUSAL = "I'm sorry, I cannot assist with that request."


def openai_refusal(text: str = REFUSAL, *, model: str = "gpt-4o-2024-08-06") -> Reply:
    """A structured-output refusal: `message.refusal` holds the model's text, `content` is
    null, `finish_reason` is "stop" (OpenAI Structured Outputs guide, "Refusals",
    https://platform.openai.com/docs/guides/structured-outputs; `content: Optional[str]`,
    `refusal: Optional[str]` in openai-python's ChatCompletionMessage)."""
    reply = openai_ok(None, model=model, completion_tokens=11)
    reply.body["choices"][0]["message"]["refusal"] = text
    return reply


def azure_content_filter_400() -> Reply:
    """Azure OpenAI's prompt filter: HTTP 400, `code: "content_filter"`, `param: "prompt"`,
    `innererror.code: "ResponsibleAIPolicyViolation"` with the per-category results (Azure
    OpenAI "Content filtering" doc, https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/content-filter)."""
    body: dict[str, Any] = {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure Content "
            "management policy. Please modify your prompt and retry. To learn more about our "
            "content filtering policies please read our documentation: "
            "https://go.microsoft.com/fwlink/?linkid=21298766",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": {
                    "hate": {"filtered": True, "severity": "high"},
                    "self_harm": {"filtered": False, "severity": "safe"},
                    "sexual": {"filtered": False, "severity": "safe"},
                    "violence": {"filtered": True, "severity": "medium"},
                },
            },
        }
    }
    return Reply(status=400, body=body)


def vllm_reasoning_only(
    reasoning: str, *, field: str = "reasoning_content", model: str = "Qwen/Qwen3-8B"
) -> Reply:
    """vLLM served with `--reasoning-parser`: the thinking goes to `reasoning_content`
    (<= 0.10) or `reasoning` (>= 0.11, "reasoning used to be called reasoning_content"),
    https://docs.vllm.ai/en/v0.11.2/features/reasoning_outputs/. When the parser takes the
    whole output as reasoning, `content` is null."""
    reply = openai_ok(None, model=model, completion_tokens=40)
    reply.body["choices"][0]["message"][field] = reasoning
    return reply


def openrouter_choice_error(
    code: int | str = 502,
    message: str = "Provider returned error",
    *,
    model: str = "openai/gpt-4o",
    provider: str = "OpenAI",
) -> Reply:
    """An error inside a 200 reply: `finish_reason: "error"` and `choices[0].error =
    {code, message, metadata}` ("Some tokens sent: Embeds error information within the
    choices array", https://openrouter.ai/docs/api-reference/errors; `NonStreamingChoice.error?:
    ErrorResponse` in the API reference's response types)."""
    reply = openai_ok("", model=model, completion_tokens=0)
    choice = reply.body["choices"][0]
    choice["finish_reason"] = "error"
    choice["native_finish_reason"] = "error"
    choice["error"] = {
        "code": code,
        "message": message,
        "metadata": {"provider_name": provider, "raw": "upstream"},
    }
    return reply
