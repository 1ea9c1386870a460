"""Shared helpers for the fake-server tests: offline litellm, one event loop, call shortcuts.

One long-lived event loop serves every test: litellm caches its HTTP clients per loop,
and reusing them across `asyncio.run` calls only produces warnings.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import litellm  # noqa: E402  (the env var must be set first)

litellm.suppress_debug_info = True

MODEL = "openai/test-model"
_loop: asyncio.AbstractEventLoop | None = None


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine on the shared loop."""
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    return _loop.run_until_complete(coro)


async def acomplete(url: str, content: Any, **kwargs: Any) -> Any:
    """One litellm chat call with retries off, as the model layer will make it."""
    messages = content if isinstance(content, list) else [{"role": "user", "content": content}]
    params: dict[str, Any] = {"num_retries": 0, "max_retries": 0, "api_key": "sk-test"}
    params.update(kwargs)
    return await litellm.acompletion(model=MODEL, api_base=url, messages=messages, **params)


def complete(url: str, content: Any, **kwargs: Any) -> Any:
    return run(acomplete(url, content, **kwargs))


def failure(url: str, content: Any, **kwargs: Any) -> BaseException:
    """The exception a call raises (the test fails if it succeeds)."""
    try:
        complete(url, content, **kwargs)
    except Exception as exc:  # the caller asserts the exact class
        return exc
    raise AssertionError("the call succeeded; a failure was expected")


JUDGE_MESSAGE = (
    "Rate how well the description matches the prompt.\n"
    "PROMPT: a red fox sleeping on a mossy stone in a forest\n"
    "DESCRIPTION: a red fox on a grey stone near a river\n"
)
# content words: prompt {red, fox, sleeping, mossy, stone, forest},
# description {red, fox, grey, stone, near, river}: 3 shared of 9 -> Jaccard 1/3
JUDGE_SCORE_0_100 = 33


def response_headers(exc: BaseException) -> Any:
    """The provider's response headers on a litellm exception (set at raise time, not declared)."""
    headers = getattr(exc, "litellm_response_headers", None)
    assert headers is not None, f"{type(exc).__name__} carries no litellm_response_headers"
    return headers
