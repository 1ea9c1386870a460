from pathlib import Path

import pytest

from titjudge.config.load import apply_overrides, load_config
from titjudge.errors import ConfigError, ModelSpecError
from titjudge.records.spec import parse_model_spec

BASE = """
name: tit-llm-gemini
data: {manifest: data/lpg/manifest.jsonl, human_pairs: data/lpg/pairs.csv}
describer: {model: "litellm:gemini/gemini-2.5-pro", prompt: describe_paper, max_tokens: 512, thinking: {budget: 128}, temperature: 0}
judges:
  - {name: tit_score, kind: embedding, model: "embed:Qwen/Qwen3-Embedding-8B"}
  - {name: tit_llm_g, kind: llm, model: "litellm:gemini/gemini-2.5-pro", prompt: judge_similarity, thinking: 1024, fallback: tit_score}
run: {concurrency: 32, rpm: 300, cache_dir: .titjudge/cache, out: runs/}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_design_example_loads(tmp_path):
    config = load_config(write(tmp_path, BASE))
    assert config.describer.spec.backend == "litellm"
    assert config.describer.spec.model_id == "gemini/gemini-2.5-pro"
    assert [j.name for j in config.judges] == ["tit_score", "tit_llm_g"]
    assert config.judges[1].fallback == "tit_score"
    assert config.run.rpm == 300


def test_misspelled_key_names_path_and_suggests(tmp_path):
    text = BASE.replace("max_tokens: 512", "max_token: 512")
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text))
    assert "unknown key 'describer.max_token'" in str(err.value)
    assert "did you mean 'max_tokens'" in str(err.value)


def test_misspelled_key_inside_list_entry(tmp_path):
    text = BASE.replace("fallback: tit_score", "falback: tit_score")
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text))
    assert "judges.1.falback" in str(err.value) and "did you mean 'fallback'" in str(err.value)


def test_unknown_backend_gets_hint(tmp_path):
    text = BASE.replace('"embed:Qwen', '"embd:Qwen')
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text))
    assert "unknown model backend 'embd'" in str(err.value) and "did you mean 'embed'" in str(
        err.value
    )


def test_unknown_fallback_is_rejected(tmp_path):
    with pytest.raises(ConfigError, match="unknown judge 'tit_scor'.*did you mean 'tit_score'"):
        load_config(write(tmp_path, BASE.replace("fallback: tit_score", "fallback: tit_scor")))


def test_bad_yaml_names_line(tmp_path):
    with pytest.raises(ConfigError, match=r"c.yaml:\d+: invalid YAML"):
        load_config(write(tmp_path, "name: x\ndescriber: {model: [\n"))


def test_missing_file():
    with pytest.raises(ConfigError, match="config file not found"):
        load_config("/nonexistent/run.yaml")


def test_overrides_by_path_index_and_name(tmp_path):
    path = write(tmp_path, BASE)
    config = load_config(
        path,
        [
            "describer.model=litellm:openai/gpt-4o",
            "describer.thinking=null",  # GPT-4o does not think: its setting goes with the model
            "run.concurrency=8",
            "judges.tit_llm_g.temperature=0.5",
            "judges.0.instruction=Find the image",
        ],
    )
    assert config.describer.model == "litellm:openai/gpt-4o"
    assert config.run.concurrency == 8 and isinstance(config.run.concurrency, int)
    assert config.judges[1].temperature == 0.5
    assert config.judges[0].instruction == "Find the image"


def test_override_errors():
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        apply_overrides({}, ["describer.model"])
    with pytest.raises(ConfigError, match="no entry named 'tit_llm'.*did you mean 'tit_llm_g'"):
        apply_overrides({"judges": [{"name": "tit_llm_g"}]}, ["judges.tit_llm.model=x"])
    with pytest.raises(ConfigError, match="out of range"):
        apply_overrides({"judges": [{"name": "a"}]}, ["judges.3.model=x"])


def test_duplicate_judge_names(tmp_path):
    text = BASE.replace("name: tit_llm_g", "name: tit_score").replace("fallback: tit_score", "")
    with pytest.raises(ConfigError, match="repeated: tit_score"):
        load_config(write(tmp_path, text))


def test_lexical_judge_takes_no_model(tmp_path):
    text = (
        BASE + "\n"
        if False
        else BASE.replace(
            "  - {name: tit_score,",
            "  - {name: lex, kind: lexical, model: 'litellm:x/y'}\n  - {name: tit_score,",
        )
    )
    with pytest.raises(ConfigError, match="lexical and uses no model"):
        load_config(write(tmp_path, text))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", "no backend prefix"),
        ("openai:gpt-4o", "unknown model backend 'openai'"),
        ("hf:", "no model id"),
        ("", "empty"),
    ],
)
def test_spec_errors(spec, message):
    with pytest.raises(ModelSpecError, match=message):
        parse_model_spec(spec)


def test_spec_parses_paths_with_colons():
    spec = parse_model_spec("hf:/models/qwen:v2")
    assert (spec.backend, spec.model_id, spec.short_name) == ("hf", "/models/qwen:v2", "qwen:v2")


def test_ablation_config_handed_to_run_says_which_command(tmp_path):
    grid = Path(__file__).resolve().parents[2] / "configs" / "paper-grid.yaml"
    with pytest.raises(ConfigError) as err:
        load_config(grid, ["describer.model=litellm:openai/gpt-4o"])
    assert str(err.value) == (
        f"{grid} is an ablation config (it has describers, comparers, bootstrap); "
        f"use titjudge ablation {grid}"
    )


def test_run_preflight_lists_every_model_as_its_judge_reaches_it(tmp_path):
    """The describer, then each judge's model; a describer-bound judge naming none reaches the
    describer's model with the describer's options, a lexical judge uses none."""
    from titjudge.run.preflight import run_model_uses

    text = BASE.replace("judges:\n", "judges:\n  - {name: self_eval, kind: self_eval}\n").replace(
        "run: {", "  - {name: lexical, kind: lexical}\nrun: {"
    )
    config = load_config(write(tmp_path, text))
    uses = run_model_uses(config)
    assert [(u.model, u.user) for u in uses] == [
        ("litellm:gemini/gemini-2.5-pro", "describer"),
        ("litellm:gemini/gemini-2.5-pro", "judge self_eval"),
        ("embed:Qwen/Qwen3-Embedding-8B", "judge tit_score"),
        ("litellm:gemini/gemini-2.5-pro", "judge tit_llm_g"),
    ]
    assert uses[1].options is config.describer
