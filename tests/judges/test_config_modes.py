"""Judge-mode options: each is validated where it applies and refused where it would be ignored."""

import pytest

from titjudge.cache.store import CallCache
from titjudge.config.load import validate_config
from titjudge.config.schema import JudgeConfig, RunConfig
from titjudge.errors import ConfigError
from titjudge.judges.llm import LLMJudge
from titjudge.judges.registry import build_judge
from titjudge.judges.repeats import RepeatedJudge
from titjudge.models.hub import ModelHub

LLM = {"name": "j", "kind": "llm", "model": "litellm:openai/judge"}


def judge(**fields):
    return validate_config(fields, JudgeConfig, "judges.yaml")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {**LLM, "kind": "embedding", "model": "embed:x", "score_mode": "expected"},
            "score_mode 'expected' applies to llm, self_eval and lmm judges, not 'embedding'",
        ),
        (
            {**LLM, "top_logprobs": 5},
            "'top_logprobs' is read only by score_mode 'expected' and lmm_yes",
        ),
        (
            {**LLM, "repeats": 3},
            "repeats 3 at temperature 0 are copies of one greedy answer; set temperature > 0",
        ),
        (
            {"name": "j", "kind": "lexical", "repeats": 2, "temperature": 1},
            "lexical judges make no sampled call",
        ),
        ({**LLM, "weights": {"entity": 2}}, "'weights' applies to checklist judges, not 'llm'"),
        (
            {**LLM, "kind": "checklist", "weights": {"entity": -1}},
            "checklist weights must be >= 0; negative: entity",
        ),
        ({**LLM, "kind": "checklist", "weights": {"entity": 1, "colour": 1}}, "weights.colour"),
        (
            {**LLM, "kind": "pairwise", "fallback": "other"},
            "a pairwise judge scores win rates over pairs",
        ),
        ({"name": "j", "kind": "checklist"}, "judge 'j' of kind 'checklist' needs a 'model'"),
        ({**LLM, "scale": [5, 3]}, "scale must be [lo, hi] with 0 <= lo < hi <= 100"),
        (
            {**LLM, "kind": "pairwise", "scale": [1, 9]},
            "'scale' applies to llm, self_eval and lmm judges",
        ),
    ],
)
def test_mode_options_are_checked(fields, message):
    with pytest.raises(ConfigError, match="judges.yaml") as caught:
        judge(**fields)
    assert message in str(caught.value)


def test_defaults_and_round_trip():
    checklist = judge(**{**LLM, "kind": "checklist"})
    assert checklist.max_tokens == 4096 and checklist.checklist_weights["entity"] == 2.0
    assert judge(**checklist.model_dump(mode="json")).max_tokens == 4096  # a dump reloads the same
    assert judge(**{**LLM, "kind": "checklist", "max_tokens": 300}).max_tokens == 300
    expected = judge(**{**LLM, "score_mode": "expected"})
    assert (
        expected.logprobs_k == 20 and judge(**expected.model_dump(mode="json")).top_logprobs is None
    )
    assert judge(name="y", kind="lmm_yes").model is None  # uses the describer's VLM


def test_nothing_may_fall_back_to_a_pairwise_judge():
    raw = {
        "name": "r",
        "describer": {"model": "litellm:openai/vlm"},
        "judges": [{**LLM, "fallback": "pair"}, {**LLM, "name": "pair", "kind": "pairwise"}],
    }
    with pytest.raises(ConfigError, match="falls back to pairwise judge 'pair'"):
        validate_config(raw, RunConfig, "run.yaml")


def test_factory_picks_templates_scales_and_wrappers(tmp_path):
    hub = ModelHub(CallCache(tmp_path / "cache"))
    describer = RunConfig.model_validate(
        {"name": "r", "describer": {"model": "litellm:openai/vlm"}}
    ).describer
    built = build_judge(judge(**{**LLM, "score_mode": "expected"}), describer.model, describer, hub)
    assert isinstance(built, LLMJudge) and built.template.name == "judge_expected"
    assert (built.scoring.lo, built.scoring.hi, built.scoring.request_logprobs) == (1, 9, 20)
    plain = build_judge(judge(**LLM), describer.model, describer, hub)
    assert plain.facts().doc() == {
        "name": "j",
        "kind": "llm",
        "model": "litellm:openai/judge",
        "template": plain.template.record(),
    }  # what runs recorded before these modes
    assert plain.scoring.request_logprobs == 0
    repeated = build_judge(
        judge(**LLM, temperature=0.7, repeats=3), describer.model, describer, hub
    )
    assert isinstance(repeated, RepeatedJudge) and repeated.facts().repeats == 3
    with pytest.raises(ConfigError, match="top_logprobs 50 exceeds the 20"):
        build_judge(
            judge(**LLM, score_mode="expected", top_logprobs=50), describer.model, describer, hub
        )
    with pytest.raises(ConfigError, match="whose role is 'judge'; it needs a 'pairwise' template"):
        build_judge(
            judge(**{**LLM, "kind": "pairwise", "prompt": "judge_similarity"}),
            describer.model,
            describer,
            hub,
        )
    with pytest.raises(ConfigError, match="it needs a 'decompose' template"):
        build_judge(
            judge(**{**LLM, "kind": "checklist", "decompose_prompt": "checklist_judge"}),
            describer.model,
            describer,
            hub,
        )


def test_api_providers_without_logprobs_are_refused_at_config_time(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    hub = ModelHub(CallCache(tmp_path / "cache"))
    describer = RunConfig.model_validate(
        {"name": "r", "describer": {"model": "litellm:openai/vlm"}}
    ).describer
    claude = {
        **LLM,
        "model": "litellm:anthropic/claude-3-5-sonnet-20240620",
        "score_mode": "expected",
    }
    with pytest.raises(ConfigError, match="does not support top_logprobs") as refused:
        build_judge(judge(**claude), describer.model, describer, hub)
    # what the judge measures is not changed behind the user's back: the refusal names the fix
    assert str(refused.value).endswith(
        f"; or --set judges.{LLM['name']}.score_mode=sampled "
        f"(comparers.{LLM['name']}.score_mode=sampled in a grid)"
    )
    build_judge(
        judge(**{**claude, "score_mode": "sampled"}), describer.model, describer, hub
    )  # sampled scores need none
