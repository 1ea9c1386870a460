"""A swap is one line (issue 48): `--set <section>.model=...` swaps a model, and the settings
the config file wrote for the old model follow it (`config.swap`): kept where the new model
takes them, left out (said once, kept in `config.swapped`) where it does not, or refused with
the exact `--set` that fixes it. What the user typed on the command line is never left out:
it is honoured or refused. `thinking: off` is taken as `null` is by a model that has no
thinking switch.

The providers' rules the swaps meet are SPEC.md section 7 (Gemini 2.5 Pro always thinks, a
budget of 128-32,768; OpenAI reasoning models take only temperature 1 and no top_p) and the
family table `titjudge.models.litellm.families` (sources cited there)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import lexical, replay_describer, run_config

import titjudge
from titjudge.ablation.config import load_ablation_config, row_run_config
from titjudge.config.load import load_config
from titjudge.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
GEMINI = ROOT / "configs" / "tit-llm-gemini.yaml"
GPT4O = "litellm:openai/gpt-4o"


def load(path: Path, *sets: str) -> Any:
    return load_config(path, list(sets))


def refusal(path: Path, *sets: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(path, *sets)
    (line,) = str(caught.value).splitlines()
    return line


def write(tmp_path: Path, **sections: Any) -> Path:
    config = {"name": "swap", "data": {"manifest": "m.jsonl"}, "judges": [], **sections}
    path = tmp_path / "swap.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_the_readmes_swap_loads_and_the_gemini_settings_follow_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="titjudge.config.swap"):
        config = load(GEMINI, f"judges.tit_llm_g.model={GPT4O}")
    judge = config.judges[0]
    assert judge.model == GPT4O
    # Gemini's thinking budget and key variable were the config's, for Gemini 2.5 Pro
    assert judge.thinking is None and judge.api_key_env is None
    assert judge.max_tokens == 1024 and judge.fallback == "lexical"  # the rest is kept
    # the sections nobody swapped keep what the file says
    assert config.judges[1].thinking.budget == 1024
    assert config.judges[1].api_key_env == "GEMINI_API_KEY"
    assert config.describer.thinking.budget == 128
    (note,) = config.swapped
    assert note == (
        f"judges.tit_llm_g.model={GPT4O}: left out the config's api_key_env GEMINI_API_KEY "
        f"(gemini's, and {GPT4O} is openai's) and thinking {{budget: 1024}} (not taken by "
        f"{GPT4O})"
    )
    assert [r.getMessage() for r in caplog.records] == [note]  # said once


def test_thinking_the_user_types_is_honoured_or_refused_with_the_set_that_fixes_it() -> None:
    swap = f"judges.tit_llm_g.model={GPT4O}"
    # gpt-4o has no thinking switch: off is what it does anyway, and null leaves it unset
    off = load(GEMINI, swap, "judges.tit_llm_g.thinking=off").judges[0]
    assert off.thinking is not None and off.thinking.enabled is False
    config = load(GEMINI, swap, "judges.tit_llm_g.thinking=null")
    assert config.judges[0].thinking is None
    # typed, thinking is the user's: only the key variable was left out
    assert config.swapped == [
        f"judges.tit_llm_g.model={GPT4O}: left out the config's api_key_env GEMINI_API_KEY "
        f"(gemini's, and {GPT4O} is openai's)"
    ]
    line = refusal(GEMINI, swap, "judges.tit_llm_g.thinking=low")
    assert line.startswith(f"{GEMINI}: judges.0: {GPT4O}: titjudge sets thinking for")
    assert line.endswith("; --set judges.tit_llm_g.thinking=off fixes it")
    # the fix it names loads
    assert load(GEMINI, swap, "judges.tit_llm_g.thinking=off").judges[0].model == GPT4O


def test_a_model_that_needs_a_setting_the_config_lacks_is_refused_with_the_exact_set() -> None:
    gpt4o = ROOT / "configs" / "tit-llm-gpt4o.yaml"
    swap = "judges.tit_llm_4o.model=litellm:gemini/gemini-2.5-pro"
    line = refusal(gpt4o, swap)
    assert "thinks by default" in line and "(128-32768 tokens" in line
    assert line.endswith("; --set judges.tit_llm_4o.thinking=1024 fixes it")
    config = load(gpt4o, swap, "judges.tit_llm_4o.thinking=1024")
    assert config.judges[0].thinking.budget == 1024
    assert config.judges[0].api_key_env is None  # OPENAI_API_KEY was openai's


def test_a_temperature_the_new_model_refuses_follows_it(tmp_path: Path) -> None:
    # gpt-5 takes only the provider's default temperature (1): the config's 0 is left out
    config = load(GEMINI, "describer.model=litellm:openai/gpt-5")
    assert config.describer.temperature is None  # nothing sent: the provider's default
    assert "temperature 0 (not taken by litellm:openai/gpt-5)" in config.swapped[0]
    # typed on the command line, it is the user's: refused, with the fix
    line = refusal(GEMINI, "describer.model=litellm:openai/gpt-5", "describer.temperature=0")
    assert "temperature 0.0 is refused" in line
    assert line.endswith("; --set describer.temperature=null fixes it")
    # a judge on the describer's model (lmm) follows the describer's swap
    path = write(
        tmp_path,
        describer={"model": GPT4O, "temperature": 0},
        judges=[{"name": "lmm_score", "kind": "lmm", "temperature": 0}],
    )
    assert load(path).judges[0].temperature == 0
    config = load(path, "describer.model=litellm:openai/o3")
    assert config.judges[0].temperature is None and config.describer.temperature is None
    assert config.swapped[1] == (
        "judges.lmm_score (on the describer's model, now litellm:openai/o3): left out the "
        "config's temperature 0 (not taken by litellm:openai/o3)"
    )


def test_a_server_of_the_old_provider_is_refused_with_both_fixes(tmp_path: Path) -> None:
    vllm = ROOT / "configs" / "vllm-qwen.yaml"
    line = refusal(vllm, f"describer.model={GPT4O}")
    assert line == (
        f"{vllm}: describer.api_base http://127.0.0.1:8000/v1 is the config's, for "
        f"litellm:hosted_vllm/Qwen/Qwen2.5-VL-7B-Instruct; {GPT4O} is served by openai, not "
        "hosted_vllm: add --set describer.api_base=null to reach openai where litellm does, or "
        "--set describer.api_base=URL for a server of yours"
    )
    assert (
        load(vllm, f"describer.model={GPT4O}", "describer.api_base=null").describer.api_base is None
    )
    # the same provider keeps its server (and thinking off stays: Qwen3 has the switch)
    config = load(vllm, "judges.tit_llm_q8b.model=litellm:hosted_vllm/Qwen/Qwen3-14B")
    judge = config.judges[0]
    assert judge.api_base == "http://127.0.0.1:8001/v1" and judge.thinking.enabled is False
    assert config.swapped == []


def test_a_swap_to_a_misspelt_provider_names_the_typo_not_a_server_to_drop() -> None:
    """`opneai` is no provider at all: the refusal is litellm's did-you-mean (from its routing
    tables), not the advice to drop the old server's api_base and reach `opneai` elsewhere."""
    vllm = ROOT / "configs" / "vllm-qwen.yaml"
    line = refusal(vllm, "describer.model=litellm:opneai/gpt-4o")
    assert line == (
        f"{vllm}: describer.model litellm:opneai/gpt-4o: unknown litellm provider 'opneai' "
        "(did you mean 'openai'?)"
    )


def test_the_refused_server_is_named_without_a_credential_in_it(tmp_path: Path) -> None:
    server = {"model": "litellm:hosted_vllm/vlm", "api_base": "http://me:s3cret-pass@gpu:8000/v1"}
    line = refusal(write(tmp_path, describer=server), f"describer.model={GPT4O}")
    assert "s3cret-pass" not in line and "http://***@gpu:8000/v1 is the config's" in line


def test_price_and_another_providers_params_follow_and_refused_params_too(tmp_path: Path) -> None:
    judge = {
        "name": "j",
        "kind": "llm",
        "model": "litellm:openai/gpt-4.1",
        "price": {"input": 2, "output": 8},
        "params": {"top_p": 0.9, "seed": 7},
    }
    path = write(tmp_path, describer={"model": GPT4O}, judges=[judge])
    # gpt-5 refuses top_p (OpenAI's reasoning guide); seed it takes; the price was gpt-4.1's
    config = load(path, "judges.j.model=litellm:openai/gpt-5")
    assert config.judges[0].price is None and config.judges[0].params == {"seed": 7}
    assert config.swapped == [
        "judges.j.model=litellm:openai/gpt-5: left out the config's price {input: 2, output: 8} "
        "(litellm:openai/gpt-4.1's) and params.top_p (refused by litellm:openai/gpt-5)"
    ]
    # another provider: params are passed to the provider as they are, so they were openai's
    config = load(path, "judges.j.model=litellm:anthropic/claude-sonnet-4-5")
    assert config.judges[0].params == {}
    # ... but a params key typed on the command line is the user's
    config = load(
        path, "judges.j.model=litellm:anthropic/claude-sonnet-4-5", "judges.j.params.seed=3"
    )
    assert config.judges[0].params == {"seed": 3}


def test_batch_at_a_provider_without_a_batch_api_is_refused_with_the_fix(tmp_path: Path) -> None:
    judge = {"name": "j", "kind": "llm", "model": GPT4O, "batch": True}
    path = write(tmp_path, describer={"model": GPT4O}, judges=[judge])
    line = refusal(path, "judges.j.model=litellm:groq/llama-3.3-70b-versatile")
    assert "batch: true needs a provider with a batch API" in line
    assert line.endswith("; --set judges.j.batch=false fixes it")


def test_setting_the_same_model_or_a_whole_section_leaves_nothing_out(tmp_path: Path) -> None:
    same = load(GEMINI, "judges.tit_llm_g.model=litellm:gemini/gemini-2.5-pro")
    assert same.judges[0].thinking.budget == 1024 and same.swapped == []
    # a section typed whole is the user's: nothing of it is the config's
    line = refusal(GEMINI, f"describer={{model: '{GPT4O}', thinking: {{budget: 128}}}}")
    assert "titjudge sets thinking for" in line


def test_a_grid_rows_swap_follows_too_and_its_run_keeps_the_note(tmp_path: Path) -> None:
    grid = {
        "name": "grid",
        "data": {"manifest": "m.jsonl", "human_pairs": "pairs.csv"},
        "describers": [
            {"name": "gemini", "model": "litellm:gemini/gemini-2.5-pro", "thinking": 128},
            {"name": "gpt", "model": GPT4O},
        ],
        "comparers": [{"name": "lexical", "kind": "lexical"}],
    }
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(grid))
    config = load_ablation_config(path, ["describers.gemini.model=litellm:openai/gpt-4.1"])
    row = config.rows[0]
    assert row.model == "litellm:openai/gpt-4.1" and row.thinking is None
    assert row_run_config(config, row).swapped == config.swapped
    assert row_run_config(config, config.rows[1]).swapped == []


@pytest.mark.slow  # a whole run (a replayed describer, no server)
def test_the_run_records_what_a_swap_left_out_in_its_config_yaml(
    synth_data: Path, tmp_path: Path
) -> None:

    replayed = replay_describer(synth_data)
    copy = tmp_path / "descriptions.jsonl"
    copy.write_bytes(Path(replayed["model"].removeprefix("replay:")).read_bytes())
    describer = {**replayed, "price": {"input": 1, "output": 1}}
    config = run_config(synth_data, tmp_path, describer=describer, judges=[lexical()])
    record = titjudge.evaluate(config, overrides=[f"describer.model=replay:{copy}"])
    written = yaml.safe_load((Path(record.run_dir) / "config.yaml").read_text())
    assert written["describer"]["model"] == f"replay:{copy}"
    assert written["describer"]["price"] is None  # what the run used
    assert written["resolved"]["swapped"] == [
        f"describer.model=replay:{copy}: left out the config's price {{input: 1, output: 1}} "
        f"({replayed['model']}'s)"
    ]
    # a run without a swap writes no such entry
    plain = titjudge.evaluate(config)
    assert (
        "swapped"
        not in yaml.safe_load((Path(plain.run_dir) / "config.yaml").read_text())["resolved"]
    )
