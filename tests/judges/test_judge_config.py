"""A judge kind is its config model plus its judge method: the built judge keeps the config it
was given (no field copied out of it), records itself from it (config.yaml's
`resolved.judges`, one typed `JudgeFacts` each) and gives its variant's provenance from it."""

from pathlib import Path

import pytest

from titjudge.cache.store import CallCache
from titjudge.config.load import validate_config
from titjudge.config.schema import JudgeConfig, RunConfig
from titjudge.judges.registry import build_judge
from titjudge.models.hub import ModelHub
from titjudge.records.judge_facts import JudgeFacts
from titjudge.records.run_config import RunConfigFile

VLM = "litellm:openai/gpt-4o"
TEXT = "litellm:openai/judge"
#: each kind with the settings that change what it records, and the keys it records, in order
KINDS = [
    ({"kind": "lexical"}, ["name", "kind", "model", "method"]),
    (
        {
            "kind": "embedding",
            "model": "litellm:openai/text-embedding-3-small",
            "instruction": "Find",
        },
        ["name", "kind", "model", "query_side", "instruction"],
    ),
    ({"kind": "llm", "model": TEXT, "max_tokens": 77}, ["name", "kind", "model", "template"]),
    (
        {"kind": "self_eval", "score_mode": "expected", "top_logprobs": 5},
        ["name", "kind", "model", "template", "score_mode", "scale", "top_logprobs"],
    ),
    (
        {"kind": "lmm", "temperature": 0.5, "repeats": 3},
        ["name", "kind", "model", "template", "repeats", "repeat_score"],
    ),
    (
        {"kind": "checklist", "model": TEXT, "weights": {"entity": 3}},
        ["name", "kind", "model", "decompose_template", "template", "weights", "score"],
    ),
    (
        {"kind": "pairwise", "model": TEXT, "temperature": 0.4, "repeats": 2},
        ["name", "kind", "model", "template", "repeats", "score"],
    ),
]


def built(tmp_path: Path, fields: dict):
    hub = ModelHub(CallCache(tmp_path / "cache"))
    describer = RunConfig.model_validate({"name": "r", "describer": {"model": VLM}}).describer
    config = validate_config({"name": "j", **fields}, JudgeConfig, "judges.yaml")
    return config, build_judge(config, describer.model, describer, hub)


@pytest.mark.parametrize(("fields", "keys"), KINDS, ids=[f["kind"] for f, _ in KINDS])
def test_a_built_judge_keeps_its_config_and_records_from_it(tmp_path, fields, keys):
    config, judge = built(tmp_path, fields)
    assert judge.config is config and judge.name == "j"
    doc = judge.facts().doc()
    assert list(doc) == keys
    assert doc["kind"] == fields["kind"]
    # a judge that names no model calls the describer's; the lexical baseline calls none
    assert doc["model"] == fields.get("model", None if fields["kind"] == "lexical" else VLM)
    if "template" in doc:
        assert set(doc["template"]) == {"name", "version", "sha256"}
    if fields["kind"] == "checklist":
        assert doc["weights"]["entity"] == 3 and doc["weights"]["relation"] == 1
    if fields["kind"] == "embedding":
        assert (doc["query_side"], doc["instruction"]) == ("instruction+query", "Find")
    if "repeats" in fields:
        assert doc["repeats"] == fields["repeats"]


def test_provenance_reads_the_config_the_judge_keeps(tmp_path):
    config, judge = built(
        tmp_path, {"kind": "llm", "model": TEXT, "max_tokens": 77, "fallback": "lex"}
    )
    found = judge.provenance(["gpt-judge-0613", "gpt-judge-0613", "a-model"])
    assert found.kind == "llm" and found.model == TEXT and found.fallback == "lex"
    assert found.answered_by == ["a-model", "gpt-judge-0613"]
    assert found.sampling == {
        "temperature": 0.0,
        "max_tokens": 77,
        "repeats": 1,
        "score_mode": "sampled",
    }
    assert found.template == "judge_similarity"
    assert found.template_sha256 == judge.facts().template.sha256
    _, borrowed = built(tmp_path, {"kind": "lmm"})
    assert borrowed.provenance([]).model == VLM  # a describer-bound judge names the VLM it used


def test_config_yaml_reads_resolved_judges_typed_and_keeps_older_keys(tmp_path):
    _, judge = built(tmp_path, {"kind": "checklist", "model": TEXT})
    older = {"name": "old", "kind": "llm", "model": TEXT, "retired_key": [1, 2]}
    record = RunConfigFile.made({"name": "r"}, {"judges": [judge.facts().doc(), older]}, {})
    record.write(tmp_path)
    read = RunConfigFile.read(tmp_path).resolved
    assert read is not None
    first, second = read.judges
    assert isinstance(first, JudgeFacts) and first == judge.facts()
    assert first.decompose_template is not None
    assert first.decompose_template.name == "checklist_decompose"
    assert second.doc() == older  # a key this release does not know is kept as written
