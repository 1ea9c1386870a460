"""Every response schema a judge sends stays within each provider's documented subset.

Rules, from the providers' documentation:
- Gemini structured output (ai.google.dev/gemini-api/docs/structured-output, "JSON Schema
  support"): a listed keyword subset; "if $ref is set on a sub-schema, no other properties,
  except those starting with $, may be set" (the 400 otherwise: google-gemini/gemini-cli#4758).
- OpenAI Structured Outputs, strict mode (platform.openai.com/docs/guides/structured-outputs,
  "Supported schemas"): every object has additionalProperties false and lists every
  property in required; only the supported keywords.
"""

import asyncio
import hashlib
import json

import pytest
from doubles.server import FakeOpenAIServer
from pydantic import ValidationError

from titjudge.cache.store import CallCache
from titjudge.judges.checklist_schema import (
    ChecklistElement,
    PromptChecklist,
    element_key,
    verdicts_schema,
)
from titjudge.judges.schemas import JudgeVerdict, PairReply, verdict_schema
from titjudge.models.calls.structured import response_schema
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.models.litellm.schemas import (
    gemini_schema,
    gemini_violations,
    openai_strict_schema,
    openai_strict_violations,
)

CHECKLIST = PromptChecklist(
    elements=[
        ChecklistElement(id="e1", type="entity", text="a girl"),
        ChecklistElement(id="e2", type="attribute", text="red coat", entities=["e1"]),
    ]
)
SENT = {
    "verdict": JudgeVerdict,
    "verdict_1_9": verdict_schema(1, 9),
    "pair": PairReply,
    "checklist": PromptChecklist,
    "checklist_verdicts": verdicts_schema(element_key(CHECKLIST)),
}


@pytest.mark.parametrize("name", SENT)
def test_gemini_gets_its_subset(name):
    sent = gemini_schema(response_schema(SENT[name]))
    assert gemini_violations(sent) == []


@pytest.mark.parametrize("name", SENT)
def test_openai_gets_strict_mode(name):
    sent = openai_strict_schema(response_schema(SENT[name]))
    assert sent is not None, f"{name} could not be made strict"
    assert openai_strict_violations(sent) == []


def test_the_checkers_catch_what_the_providers_reject():
    # pydantic puts `description` beside `$ref`: the shape Gemini answers with 400
    raw = response_schema(SENT["checklist_verdicts"])
    assert any("$ref with sibling keys ['description']" in v for v in gemini_violations(raw))
    strict = openai_strict_violations(response_schema(JudgeVerdict))
    assert any("properties not in required" in v for v in strict)
    assert any("unsupported keyword 'minLength'" in v for v in strict)


def test_the_translation_keeps_the_element_descriptions():
    sent = gemini_schema(response_schema(SENT["checklist_verdicts"]))
    assert sent["properties"]["e2"]["description"] == "attribute: red coat"
    assert set(sent["properties"]["e2"]["properties"]) == {"reason", "verdict"}


def test_a_free_form_map_is_never_claimed_strict():
    schema = {"type": "object", "additionalProperties": {"type": "number"}}
    assert openai_strict_schema(schema) is None


@pytest.mark.parametrize("bad", [True, "85", None, [85], {"v": 85}])
def test_only_a_json_number_is_a_score(bad):
    with pytest.raises(ValidationError):
        JudgeVerdict.model_validate({"rationale": "r", "score": bad})
    with pytest.raises(ValidationError):
        verdict_schema(1, 9).model_validate({"rationale": "r", "score": bad})
    assert JudgeVerdict.model_validate({"rationale": "r", "score": 85}).score == 85.0


def test_the_pair_reply_reaches_providers_by_the_name_it_always_had(tmp_path, monkeypatch):
    """The pairwise judge's reply schema (`PairReply`) is sent as `PairVerdict`, and its JSON
    schema, which every pairwise call's cache key holds, is the one cached answers were keyed by."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sent = []

    def responder(request):
        sent.append(request.body["response_format"]["json_schema"])
        return {"rationale": "the first shows the cat", "winner": "first"}

    with FakeOpenAIServer(responder=responder) as server:
        options = ModelOptions(api_base=server.url, backoff_initial=0.01)
        client = ModelHub(CallCache(tmp_path / "cache")).text_client("litellm:openai/m", options)
        result = asyncio.run(
            client.structured(GenerateRequest(prompt="p"), PairReply, role="judge", probe=SEND)
        )
    assert result.ok and result.value.winner == "first"
    assert [schema["name"] for schema in sent] == ["PairVerdict"]
    schema = json.dumps(response_schema(PairReply), sort_keys=True).encode()
    assert hashlib.sha256(schema).hexdigest() == (
        "2ee02536ed783fae77165419a5d2350dfcbe37709011a7804412051607199dcd"
    )
