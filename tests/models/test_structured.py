import pytest

from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.calls.structured import StructuredOutputError, parse_structured


def test_plain_fenced_and_prose_wrapped_json():
    plain = '{"rationale": "fine", "score": 71}'
    assert parse_structured(plain, JudgeVerdict).score == 71
    fenced = (
        'Here you go:\n```json\n{"rationale": "ok", "score": 40, "misses": ["moon"]}\n```\nThanks'
    )
    verdict = parse_structured(fenced, JudgeVerdict)
    assert (verdict.score, verdict.misses) == (40, ["moon"])
    prose = 'I think {this} matters. {"rationale": "has {braces} inside", "score": 12} done'
    assert parse_structured(prose, JudgeVerdict).rationale == "has {braces} inside"


def test_first_valid_object_wins_over_invalid_ones():
    text = '{"score": 500} and then {"rationale": "r", "score": 50}'
    assert parse_structured(text, JudgeVerdict).score == 50


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("score: 80", "no JSON object"),
        ('{"rationale": "r", "score": 101}', "score"),
        ('{"rationale": "r"}', "score: Field required"),
        ('{"rationale": "r", "score": 5', "no JSON object"),
    ],
)
def test_failures_say_why(text, message):
    with pytest.raises(StructuredOutputError, match=message):
        parse_structured(text, JudgeVerdict)


def test_schema_is_pinned():
    schema = JudgeVerdict.model_json_schema()
    assert list(schema["properties"]) == [
        "rationale",
        "matches",
        "misses",
        "contradictions",
        "score",
    ]
    assert schema["required"] == ["rationale", "score"]
    assert schema["properties"]["score"]["maximum"] == 100
    assert all("description" in field for field in schema["properties"].values())
