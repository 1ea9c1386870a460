"""Every shipped verdict template is sent with a schema asking what its text asks: the same
fields, and an integer score on the template's scale. The paper's comparer wording
(`judge_paper`) and the LMM-score templates ask for `{"rationale", "score": <integer>}`, so
they are sent `ScoreVerdict` (a full verdict's required lists would contradict their text
under OpenAI's strict mode); the others ask for the full verdict."""

from __future__ import annotations

import re

import pytest

from titjudge.judges.llm import SHORT_REPLIES, TEMPLATE_SCALES, Scoring
from titjudge.prompts.loader import load_template

VERDICT_TEMPLATES = [
    "judge_paper",
    "judge_similarity",
    "judge_expected",
    "lmm_score",
    "lmm_expected",
]


def reply_part(name: str) -> str:
    """What a template's text asks the reply to be (from "Reply with only")."""
    template = load_template(name)
    text = template.render(prompt="P", **({"description": "D"} if "lmm" not in name else {}))[1]
    return text[text.index("Reply with only") :]


def asked_fields(name: str) -> list[str]:
    """The JSON fields a template's text asks for, in order."""
    return re.findall(r'"(\w+)"', reply_part(name))


@pytest.mark.parametrize("name", VERDICT_TEMPLATES)
def test_each_template_is_sent_the_schema_its_text_asks_for(name):
    lo, hi = TEMPLATE_SCALES.get(name, (0, 100))
    schema = Scoring(lo=lo, hi=hi, short=name in SHORT_REPLIES).schema.model_json_schema()
    assert asked_fields(name) == list(schema["properties"])
    score = schema["properties"]["score"]
    assert (score["minimum"], score["maximum"]) == (lo, hi)
    if name in SHORT_REPLIES:
        assert "integer" in reply_part(name) and score["type"] == "integer"


def test_the_papers_wording_validates_an_integer_score_and_refuses_anything_else():
    schema = Scoring(short=True).schema
    verdict = schema.model_validate({"rationale": "close", "score": 80})
    assert verdict.score == 80 and verdict.matches == [] and verdict.contradictions == []
    for bad in (80.5, "80", True, 101):
        with pytest.raises(ValueError):
            schema.model_validate({"rationale": "close", "score": bad})
    assert schema.model_json_schema()["required"] == ["rationale", "score"]
