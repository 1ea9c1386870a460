"""An `hf:` model decodes under a judge's JSON schema (`models.local.hf_schema`): a tiny
random-weight Qwen3, whose unconstrained output is noise, writes schema-valid JSON under the
grammar, row by row within one batch (a row without a schema stays free); `structured_output:
prompt` turns the grammar off; the grammar is part of the calls' cache key."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.models.local.hf_plan import CONSTRAINT
from titjudge.models.registry import build_text_backend

pytest.importorskip("llguidance")

SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"enum": ["yes", "no", "unsure"]},
        "score": {"type": "integer", "minimum": 0, "maximum": 9},
    },
    "required": ["verdict", "score"],
    "additionalProperties": False,
}


def generate(backend, requests):
    async def go():
        return await asyncio.gather(*(backend.generate(r) for r in requests))

    return asyncio.run(go())


def test_a_schema_constrains_each_row_and_a_row_without_one_stays_free(qwen3_path: Path):
    backend = build_text_backend(f"hf:{qwen3_path}", ModelOptions(batch_size=4))
    assert backend.capabilities.json_schema and backend.cache_facts()["decoding"] == CONSTRAINT
    asked = [
        GenerateRequest(prompt=f"judge {i}", max_tokens=40, json_schema=SCHEMA) for i in range(3)
    ]
    free = GenerateRequest(prompt="judge 0", max_tokens=40)
    *constrained, unconstrained = generate(backend, [*asked, free])
    for generation in constrained:
        assert generation.finish_reason == "stop", generation.text
        reply = json.loads(generation.text)
        assert set(reply) == {"verdict", "score"}
        assert reply["verdict"] in ("yes", "no", "unsure")
        assert isinstance(reply["score"], int) and 0 <= reply["score"] <= 9
    with pytest.raises(ValueError):  # random weights, no grammar: not JSON
        json.loads(unconstrained.text)


def test_prompt_turns_the_grammar_off(qwen3_path: Path):
    backend = build_text_backend(
        f"hf:{qwen3_path}", ModelOptions(batch_size=2, structured_output="prompt")
    )
    assert not backend.capabilities.json_schema and "decoding" not in backend.cache_facts()
    (generation,) = generate(
        backend, [GenerateRequest(prompt="judge 0", max_tokens=40, json_schema=SCHEMA)]
    )
    with pytest.raises(ValueError):
        json.loads(generation.text)
