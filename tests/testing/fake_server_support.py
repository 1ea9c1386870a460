"""Shared helpers for the fake-server tests: titjudge's litellm backend aimed at the fake
server, one event loop, call shortcuts.

The fake server is driven as a run drives a provider: `LiteLLMBackend.generate` (litellm
underneath, its retries off). The tests read the `Generation` titjudge makes of each reply,
and a failure as titjudge classifies it (`TransientError` with `retry_after` and
`rate_limited`, `PermanentError`), never litellm's own objects.

One long-lived event loop serves every test: litellm caches its HTTP clients per loop,
and reusing them across `asyncio.run` calls only produces warnings.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Coroutine, Iterator
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from titjudge.models.core.base import GenerateRequest, Generation  # noqa: E402
from titjudge.models.core.options import ModelOptions  # noqa: E402
from titjudge.models.litellm.backend import LiteLLMBackend
from titjudge.models.litellm.embed import LiteLLMEmbeddingBackend  # noqa: E402
from titjudge.models.litellm.factory import build  # noqa: E402
from titjudge.records.spec import parse_model_spec  # noqa: E402

MODEL = "openai/test-model"
KEY_ENV = "TITJUDGE_FAKE_SERVER_API_KEY"
_loop: asyncio.AbstractEventLoop | None = None


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine on the shared loop."""
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    return _loop.run_until_complete(coro)


@contextlib.contextmanager
def _key(key: str) -> Iterator[ModelOptions]:
    previous = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = key
    try:
        yield ModelOptions(api_key_env=KEY_ENV)
    finally:
        if previous is None:
            del os.environ[KEY_ENV]
        else:
            os.environ[KEY_ENV] = previous


def backend(url: str, *, key: str = "sk-test", **options: Any) -> LiteLLMBackend:
    """`litellm:openai/test-model` at `url`, its key read through `api_key_env` as a run
    reads it (the variable is restored once the backend has read it)."""
    with _key(key) as keyed:
        made = keyed.model_copy(update={"api_base": url, **options})
        return build(parse_model_spec(f"litellm:{MODEL}"), made)


def embedder(url: str, model: str = "openai/test-embed") -> LiteLLMEmbeddingBackend:
    """titjudge's served-embeddings backend for `model` at `url`."""
    with _key("sk-test") as keyed:
        made = keyed.model_copy(update={"api_base": url})
        return LiteLLMEmbeddingBackend(parse_model_spec(f"litellm:{model}"), made)


def request(content: str | GenerateRequest, **fields: Any) -> GenerateRequest:
    return content if isinstance(content, GenerateRequest) else GenerateRequest(content, **fields)


async def aattempt(
    url: str,
    content: str | GenerateRequest,
    *,
    key: str = "sk-test",
    timeout: float | None = None,
    **fields: Any,
) -> Generation | BaseException:
    """One call: the Generation, or the exception as titjudge classifies it."""
    made = backend(url, key=key, **({} if timeout is None else {"timeout": timeout}))
    try:
        return await made.generate(request(content, **fields))
    except Exception as exc:
        return made.classify_error(exc)


def attempt(url: str, content: str | GenerateRequest, **kwargs: Any) -> Generation | BaseException:
    return run(aattempt(url, content, **kwargs))


def generate(url: str, content: str | GenerateRequest, **kwargs: Any) -> Generation:
    """The Generation of one call (the test fails if the call fails)."""
    outcome = attempt(url, content, **kwargs)
    if isinstance(outcome, BaseException):
        raise AssertionError(f"the call failed: {outcome!r}") from outcome
    return outcome


def failure(url: str, content: str | GenerateRequest, **kwargs: Any) -> BaseException:
    """The classified error of one call (the test fails if the call succeeds)."""
    outcome = attempt(url, content, **kwargs)
    if not isinstance(outcome, BaseException):
        raise AssertionError(f"the call succeeded ({outcome.text!r}); a failure was expected")
    return outcome


JUDGE_MESSAGE = (
    "Rate how well the description matches the prompt.\n"
    "PROMPT: a red fox sleeping on a mossy stone in a forest\n"
    "DESCRIPTION: a red fox on a grey stone near a river\n"
)
# content words: prompt {red, fox, sleeping, mossy, stone, forest},
# description {red, fox, grey, stone, near, river}: 3 shared of 9 -> Jaccard 1/3
JUDGE_SCORE_0_100 = 33
