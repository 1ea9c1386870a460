"""Thinking as a model option: what each provider is sent, and what it would reject.

Provider facts (cited in titjudge.models.core.thinking): Gemini 2.5 Pro thinks always, budget
128-32,768, 0 rejected ("This model only works in thinking mode"; Gemini thinking docs,
googleapis/python-genai#811); Flash 0-24,576; thinking counts against maxOutputTokens.
vLLM takes Qwen3's switch as `chat_template_kwargs` in the body (vLLM reasoning-outputs docs).
"""

import pytest

from titjudge.config.schema import DescriberConfig
from titjudge.errors import ConfigError
from titjudge.judges.llm import LLMJudgeConfig
from titjudge.models.core.thinking import ThinkingError, ThinkingOptions
from titjudge.models.core.thinking import plan_thinking as plan_local_thinking
from titjudge.models.litellm.thinking import plan_thinking
from titjudge.records.spec import parse_model_spec

PRO = parse_model_spec("litellm:gemini/gemini-2.5-pro")
FLASH = parse_model_spec("litellm:gemini/gemini-2.5-flash")
VLLM_QWEN3 = parse_model_spec("litellm:hosted_vllm/Qwen/Qwen3-8B")


def test_gemini_budget_goes_to_thinking_config_and_on_top_of_the_answer():
    plan = plan_thinking(PRO, ThinkingOptions(budget=1024))
    assert plan.kwargs == {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert plan.reserve == 1024 and plan.body == {}


@pytest.mark.parametrize(
    ("thinking", "message"),
    [
        (None, "thinks by default"),
        (ThinkingOptions(enabled=False), "only works in thinking mode"),
        (ThinkingOptions(budget=0), "only works in thinking mode"),
        (ThinkingOptions(budget=64), "outside the model's range 128-32768"),
        (ThinkingOptions(budget=40000), "outside the model's range 128-32768"),
        (ThinkingOptions(effort="low"), "takes a thinking budget in tokens"),
    ],
)
def test_gemini_pro_refuses_what_the_api_would_reject(thinking, message):
    with pytest.raises(ThinkingError, match=message):
        plan_thinking(PRO, thinking)


def test_gemini_flash_can_stop_thinking():
    plan = plan_thinking(FLASH, ThinkingOptions(enabled=False))
    assert plan.kwargs == {"thinking": {"type": "enabled", "budget_tokens": 0}}
    assert plan.reserve == 0


def test_qwen3_on_a_server_is_switched_in_the_request_body_and_defaults_off():
    assert plan_thinking(VLLM_QWEN3, None).body == {
        "chat_template_kwargs": {"enable_thinking": False}
    }
    on = plan_thinking(VLLM_QWEN3, ThinkingOptions(budget=512))
    assert on.body == {"chat_template_kwargs": {"enable_thinking": True}} and on.reserve == 512
    # an OpenAI-compatible server named by api_base is treated the same way
    served = plan_thinking(parse_model_spec("litellm:openai/Qwen/Qwen3-14B"), None, "http://x/v1")
    assert served.body == {"chat_template_kwargs": {"enable_thinking": False}}


def test_qwen3_hf_sets_the_chat_template_argument():
    plan = plan_local_thinking(parse_model_spec("hf:Qwen/Qwen3-8B"), ThinkingOptions(enabled=True))
    assert plan.enable_thinking is True and plan.kwargs == {} and plan.body == {}


@pytest.mark.parametrize(
    "thinking",
    [
        None,
        ThinkingOptions(enabled=False),
        ThinkingOptions(enabled=True),
        ThinkingOptions(budget=300),
    ],
)
def test_qwen3_is_one_rule_on_a_server_and_on_hf(thinking):
    """The switch and the reserve are the same wherever Qwen3 runs; only where the switch goes
    differs (the server's chat_template_kwargs, the local chat template's argument)."""
    served = plan_thinking(VLLM_QWEN3, thinking)
    local = plan_local_thinking(parse_model_spec("hf:Qwen/Qwen3-8B"), thinking)
    assert served.body["chat_template_kwargs"]["enable_thinking"] is local.enable_thinking
    assert served.reserve == local.reserve == (300 if thinking and thinking.budget else 0)


def test_qwen3_refuses_an_effort_on_a_server_and_on_hf_alike():
    effort = ThinkingOptions(effort="high")
    with pytest.raises(ThinkingError) as served:
        plan_thinking(VLLM_QWEN3, effort)
    with pytest.raises(ThinkingError) as local:
        plan_local_thinking(parse_model_spec("hf:Qwen/Qwen3-8B"), effort)
    assert "a switch with no effort levels" in str(served.value)
    assert str(served.value).split(":", 2)[-1] == str(local.value).split(":", 2)[-1]


def test_openai_reasoning_takes_an_effort_and_gpt4o_takes_nothing():
    o3 = parse_model_spec("litellm:openai/o3-mini")
    plan = plan_thinking(o3, ThinkingOptions(effort="high", budget=4000))
    assert plan.kwargs == {"reasoning_effort": "high"} and plan.reserve == 4000
    # unset: the provider's default effort, with OpenAI's documented 25,000-token reserve
    assert plan_thinking(o3, None).kwargs == {} and plan_thinking(o3, None).reserve == 25_000
    with pytest.raises(ThinkingError, match="cannot stop reasoning"):
        plan_thinking(o3, ThinkingOptions(enabled=False))
    # gpt-5's least effort, minimal, still reasons: 'off' is refused, not replaced by it
    with pytest.raises(ThinkingError, match="the least is 'minimal'"):
        plan_thinking(parse_model_spec("litellm:openai/gpt-5"), ThinkingOptions(enabled=False))
    gpt51 = plan_thinking(
        parse_model_spec("litellm:openai/gpt-5.1"), ThinkingOptions(enabled=False)
    )
    assert gpt51.kwargs == {"reasoning_effort": "none"} and gpt51.reserve == 0
    gpt4o = parse_model_spec("litellm:openai/gpt-4o")
    assert plan_thinking(gpt4o, None).kwargs == {}
    with pytest.raises(ThinkingError, match="no thinking setting"):
        plan_thinking(gpt4o, ThinkingOptions(effort="low"))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("off", ThinkingOptions(enabled=False)),
        (False, ThinkingOptions(enabled=False)),
        (0, ThinkingOptions(enabled=False)),
        (2048, ThinkingOptions(budget=2048)),
        ("low", ThinkingOptions(effort="low")),
        ({"budget": 300}, ThinkingOptions(budget=300)),
    ],
)
def test_shorthands(raw, expected):
    assert ThinkingOptions.model_validate(raw) == expected


def test_config_errors_name_the_key_and_the_fix():
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig

    raw = {
        "name": "x",
        "describer": {"model": "litellm:gemini/gemini-2.5-pro", "thinking": {"budget": 0}},
    }
    with pytest.raises(ConfigError, match=r"describer: .*only works in thinking mode"):
        validate_config(raw, RunConfig, "cfg.yaml")
    with pytest.raises(ValueError, match="thinking is off, so it takes no budget"):
        LLMJudgeConfig(name="j", kind="llm", model="hf:x", thinking={"enabled": False, "budget": 5})
    ok = DescriberConfig(model="litellm:gemini/gemini-2.5-pro", thinking=256, max_tokens=512)
    assert ok.thinking == ThinkingOptions(budget=256) and ok.max_tokens == 512


def test_off_is_taken_by_a_model_without_a_thinking_switch():
    """`thinking: off` asks for what such a model does anyway (issue 48: `--set ...thinking=off`
    was refused on gpt-4o, only `null` worked): nothing is sent, as for unset; anything that
    would make it think is still refused, naming `off` as the fix."""
    off = ThinkingOptions(enabled=False)
    for spec, planner in (
        (parse_model_spec("litellm:openai/gpt-4o"), plan_thinking),
        (parse_model_spec("litellm:gemini/gemini-2.0-flash"), plan_thinking),
        (parse_model_spec("hf:/models/llama-3-8b"), plan_local_thinking),
    ):
        assert planner(spec, off).record() == {} == planner(spec, None).record()
        with pytest.raises(ThinkingError) as refused:
            planner(spec, ThinkingOptions(effort="low"))
        assert refused.value.fix == "off"
