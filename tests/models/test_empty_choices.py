"""A reply with `"choices": []` (HTTP 200; Azure OpenAI answers so when its content filter
stops a prompt, github.com/InternLM/MindSearch/issues/310) through litellm: a failure record
naming it, sent once (not retried, nor sent again in the same run), never cached, for plain
and structured calls alike."""

import asyncio

import pytest
from doubles.server import Fault

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub

GOOD = {"rationale": "all there", "score": 77}
REASON = "the provider's reply has no choices (an empty 'choices' list)"


def _client(server, tmp_path):
    options = ModelOptions(api_base=server.url, backoff_initial=0.01, backoff_max=0.05)
    return ModelHub(CallCache(tmp_path / "cache")).text_client("litellm:openai/m", options)


@pytest.mark.parametrize("kind", ["text", "structured"])
def test_empty_choices_is_a_permanent_uncached_failure(kind, server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    client = _client(server, tmp_path)
    request = GenerateRequest(prompt="PROMPT:\na red cat\n\nDESCRIPTION:\na red cat")

    def ask(client):
        if kind == "text":
            return asyncio.run(client.text(request, role="describer", probe=SEND))
        return asyncio.run(client.structured(request, JudgeVerdict, role="judge", probe=SEND))

    server.script(Fault("no_choices"))
    failed = ask(client)
    assert not failed.ok and failed.value is None
    assert failed.error == REASON and "IndexError" not in failed.error
    assert failed.attempts == 1 and server.stats.total == 1
    shared = ask(client)  # the same run shares the failure: nothing is sent again
    assert not shared.ok and shared.error == REASON and server.stats.total == 1
    server.script(GOOD)
    again = ask(_client(server, tmp_path))  # a re-run: nothing was cached, the model is asked
    assert again.ok and not again.cached and server.stats.total == 2
