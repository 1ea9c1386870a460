"""The checklist judge: decomposition once per prompt (cached), element verdicts per item, scoring."""

import pytest
from doubles.server import FakeOpenAIServer
from judge_helpers import (
    ModesResponder,
    description_by_item,
    element_verdict,
    manifest,
    read_lines,
    run_config,
    synthetic_checklists,
)

import titjudge
from titjudge.judges.checklist_schema import PromptChecklist, score_checklist, verdicts_schema

WEIGHTS = {
    "entity": 3,
    "attribute": 1,
    "relation": 2,
    "setting": 1,
    "composition": 0.5,
    "lighting": 1,
    "style": 1,
    "detail": 0.25,
}


def expected_score(elements, description, weights):
    """Weighted share of satisfied elements, recomputed from the responder's rule."""
    texts = {e["id"]: e["text"] for e in elements}
    verdicts = {
        e["id"]: element_verdict(
            e["type"], e["text"], [texts[r] for r in e["entities"]], description
        )
        for e in elements
    }
    total = got = 0.0
    for e in elements:
        ok = verdicts[e["id"]] == "present" and all(verdicts[r] == "present" for r in e["entities"])
        total += weights[e["type"]]
        got += weights[e["type"]] * ok
    return got / total, verdicts


@pytest.mark.slow
def test_checklist_run_caches_decomposition_per_prompt(synth_data, tmp_path):
    judges = [
        {"name": "check", "kind": "checklist", "model": "litellm:openai/judge", "weights": WEIGHTS}
    ]
    responder = ModesResponder(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(synth_data, server.url, tmp_path, judges)
        outcome = titjudge.evaluate(config)
        assert outcome.summary.exit_code == 0
        # one decomposition per prompt (4), one element-verdict call per item (16)
        assert (responder.count("decompose"), responder.count("check")) == (4, 16)
        again = titjudge.evaluate(config)
        # all from the cache
        assert (responder.count("decompose"), responder.count("check")) == (4, 16)
    assert [line.score for line in again.item_lines] == [line.score for line in outcome.item_lines]

    checklists = synthetic_checklists(synth_data)
    texts = description_by_item(synth_data)
    prompts = {row["item_id"]: row["prompt"] for row in manifest(synth_data)}
    # the re-run's own run dir (the first run's is kept beside it)
    lines = {line["item_id"]: line for line in read_lines(again.run_dir / "items.jsonl")}
    scores = set()
    for item_id, line in lines.items():
        elements = checklists[prompts[item_id]]
        score, verdicts = expected_score(elements, texts[item_id], WEIGHTS)
        assert line["score"] == pytest.approx(score, abs=1e-6)
        rows = line["details"]["checklist"]
        assert [r["id"] for r in rows] == [e["id"] for e in elements]
        assert {r["id"]: r["verdict"] for r in rows} == verdicts
        assert len(line["details"]["elements"]) == len(elements)
        assert line["rationale"].count("\n") == len(elements)  # summary line + one line per element
        scores.add(score)
    assert len(scores) > 8  # the checklist separates the images
    # the first run charged each prompt's decomposition to the one item whose call paid for it
    assert sum(not line.details["decomposition_cached"] for line in outcome.item_lines) == 4
    # the re-run's items.jsonl: every decomposition came from the cache
    assert all(line["details"]["decomposition_cached"] for line in lines.values())
    assert "pairwise_accuracy" in outcome.metrics_json()["variants"]["check"]


def _checklist():
    return PromptChecklist.model_validate(
        {
            "elements": [
                {"id": "e1", "type": "entity", "text": "girl", "entities": []},
                {"id": "e2", "type": "attribute", "text": "red coat", "entities": ["e1"]},
                {"id": "e3", "type": "entity", "text": "dog", "entities": []},
                {
                    "id": "e4",
                    "type": "relation",
                    "text": "girl left of dog",
                    "entities": ["e1", "e3"],
                },
                {"id": "e5", "type": "style", "text": "watercolour", "entities": []},
            ]
        }
    )


def test_missing_entity_takes_its_attributes_and_relations_with_it():
    checklist = _checklist()
    schema = verdicts_schema(tuple((e.id, e.type, e.text) for e in checklist.elements))
    verdicts = schema.model_validate(
        {
            "e1": {"reason": "no girl", "verdict": "absent"},
            "e2": {"reason": "a red coat on a hook", "verdict": "present"},
            "e3": {"reason": "a dog", "verdict": "present"},
            "e4": {"reason": "says left", "verdict": "present"},
            "e5": {"reason": "oil paint", "verdict": "contradicted"},
        }
    )
    weights = {"entity": 2, "attribute": 1, "relation": 1, "style": 1}
    scored = score_checklist(checklist, verdicts, weights)
    # satisfied: only e3 (weight 2) of 2 + 1 + 2 + 1 + 1 = 7
    assert scored.score == pytest.approx(2 / 7)
    assert scored.counts == {
        "present": 3,
        "absent": 1,
        "contradicted": 1,
        "missed_by_entity": 2,
        "satisfied": 1,
    }
    assert [r["missed_by_entity"] for r in scored.rows] == [False, True, False, True, False]
    with pytest.raises(ValueError, match="no element of this prompt carries weight"):
        score_checklist(checklist, verdicts, {})


def test_schemas_reject_what_scoring_cannot_use():
    with pytest.raises(ValueError, match="not entity elements"):
        PromptChecklist.model_validate(
            {
                "elements": [
                    {"id": "e1", "type": "style", "text": "ink", "entities": []},
                    {"id": "e2", "type": "attribute", "text": "black ink", "entities": ["e1"]},
                ]
            }
        )
    with pytest.raises(ValueError, match="must name the entity ids"):
        PromptChecklist.model_validate(
            {"elements": [{"id": "e1", "type": "relation", "text": "a above b"}]}
        )
    schema = verdicts_schema((("e1", "entity", "girl"), ("e2", "style", "ink")))
    assert schema.model_json_schema()["required"] == ["e1", "e2"]
    with pytest.raises(
        ValueError, match="e2"
    ):  # a skipped element fails validation (and is re-asked)
        schema.model_validate({"e1": {"reason": "x", "verdict": "present"}})


class _UpperIds(ModesResponder):
    """Decomposes with ids `E1, E2, ...` (and references in the same spelling), as a model
    that does not follow the template's `e1` may."""

    def __init__(self, data):
        super().__init__(data)
        self.checklists = {
            prompt: [
                {
                    **e,
                    "id": e["id"].upper(),
                    "entities": [r.upper() for r in e["entities"]],
                }
                for e in elements
            ]
            for prompt, elements in self.checklists.items()
        }


@pytest.mark.slow
def test_a_decomposition_with_ids_E1_E2_scores(synth_data, tmp_path):
    judges = [
        {"name": "check", "kind": "checklist", "model": "litellm:openai/judge", "weights": WEIGHTS}
    ]
    responder = _UpperIds(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        outcome = titjudge.evaluate(run_config(synth_data, server.url, tmp_path, judges))
    assert outcome.summary.exit_code == 0
    assert responder.count("decompose") == 4  # no re-ask: `E1` is taken as it is
    lines = read_lines(outcome.run_dir / "items.jsonl")
    checklists = synthetic_checklists(synth_data)
    texts = description_by_item(synth_data)
    prompts = {row["item_id"]: row["prompt"] for row in manifest(synth_data)}
    for line in lines:
        assert line["status"] == "ok", line.get("error")
        elements = checklists[prompts[line["item_id"]]]  # the same elements, ids e1, e2, ...
        score, _ = expected_score(elements, texts[line["item_id"]], WEIGHTS)
        assert line["score"] == pytest.approx(score, abs=1e-6)
        assert [r["id"] for r in line["details"]["checklist"]] == [e["id"] for e in elements]


def test_the_judge_numbers_elements_itself():
    """Any unique id (or none) is renumbered e1, e2, ... in order, references rewritten; an
    entity may be named by its text when it has no id."""
    checklist = PromptChecklist.model_validate(
        {
            "elements": [
                {"id": "girl-1", "type": "entity", "text": "girl"},
                {"id": 7, "type": "attribute", "text": "red coat", "entities": ["GIRL-1"]},
                {"type": "entity", "text": "Dog"},
                {"type": "relation", "text": "girl left of dog", "entities": ["girl-1", "dog"]},
            ]
        }
    )
    assert [(e.id, e.entities) for e in checklist.elements] == [
        ("e1", []),
        ("e2", ["e1"]),
        ("e3", []),
        ("e4", ["e1", "e3"]),
    ]
    # validating the normalised checklist again (a cache hit) changes nothing
    assert PromptChecklist.model_validate(checklist.model_dump()) == checklist


def test_a_malformed_decomposition_still_fails_clearly():
    with pytest.raises(ValueError, match=r"element e3 names 'E1', which 2 elements \(e1, e2\)"):
        PromptChecklist.model_validate(
            {
                "elements": [
                    {"id": "E1", "type": "entity", "text": "girl"},
                    {"id": "E1", "type": "entity", "text": "dog"},
                    {"id": "E2", "type": "attribute", "text": "red coat", "entities": ["E1"]},
                ]
            }
        )
    with pytest.raises(ValueError, match="type"):
        PromptChecklist.model_validate({"elements": [{"id": "E1", "text": "girl"}]})
    with pytest.raises(ValueError, match="not entity elements"):
        PromptChecklist.model_validate(
            {
                "elements": [
                    {"id": "E1", "type": "entity", "text": "girl"},
                    {"id": "E2", "type": "attribute", "text": "red coat", "entities": ["E9"]},
                ]
            }
        )


@pytest.mark.slow
def test_estimate_counts_every_verdict_call_the_run_then_sends(synth_data, tmp_path, capsys):
    """A checklist's verdict calls read its decomposition: the estimate takes a stand-in of
    the decomposition's expected length for them, so it counts the 16 verdict calls with the
    4 decompositions (it counted the 4 alone before). The run then sends exactly those, and a
    second estimate counts nothing left to send."""
    import json

    from builders import write_config

    from titjudge.cli import main

    judges = [{"name": "check", "kind": "checklist", "model": "litellm:openai/judge"}]
    responder = ModesResponder(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(synth_data, server.url, tmp_path, judges)
        config["describer"]["price"] = {"input": 2.0, "output": 8.0}
        config["judges"][0]["price"] = {"input": 1.0, "output": 4.0}
        path = str(write_config(config, tmp_path))

        def estimate() -> dict:
            capsys.readouterr()
            assert main(["estimate", path, "--json"]) == 0
            lines = json.loads(capsys.readouterr().out)["lines"]
            return {line["role"]: line for line in lines}

        before = estimate()
        assert len(server.stats.records) == 0  # nothing sent
        assert before["judge"]["calls"] == 4 + 16
        assert before["judge"]["usd"] > 0
        assert main(["run", path]) == 0
        assert (responder.count("decompose"), responder.count("check")) == (4, 16)
        after = estimate()
    assert after.get("judge", {"calls": 0})["calls"] == 0
