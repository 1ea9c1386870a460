"""Ablation configs: the shipped grids validate; mistakes are one clear line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from titjudge.ablation.config import load_ablation_config, row_run_config
from titjudge.cli import main
from titjudge.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]

SMALL = """
name: small
data: {manifest: data/m.jsonl, human_pairs: data/p.csv}
describers:
  - {name: gpt-4o, label: GPT-4o, model: "litellm:openai/gpt-4o", rpm: 60}
  - {name: qwen-7b, model: "hf:Qwen/Qwen2.5-VL-7B-Instruct", device: cpu}
comparers:
  - {name: lmm_score, kind: lmm}
  - {name: self_eval, kind: self_eval, max_tokens: 256}
  - {name: tit_score, kind: embedding, model: "embed:Qwen/Qwen3-Embedding-8B"}
  - {name: tit_llm_q8b, kind: llm, model: "hf:Qwen/Qwen3-8B", params: {enable_thinking: false}}
  - {name: lexical, kind: lexical, enabled: false}
run: {cache_dir: cache, out: runs}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ablation.yaml"
    path.write_text(text)
    return path


def test_paper_grid_reproduces_the_papers_rows_and_columns():
    config = load_ablation_config(REPO / "configs" / "paper-grid.yaml")
    assert [(r.heading, r.model) for r in config.rows] == [
        ("Gemini 2.5 Pro", "litellm:gemini/gemini-2.5-pro"),
        ("GPT-4o", "litellm:openai/gpt-4o"),
        ("Qwen2.5-VL-7B", "hf:Qwen/Qwen2.5-VL-7B-Instruct"),
        ("Qwen2.5-VL-32B", "hf:Qwen/Qwen2.5-VL-32B-Instruct"),
        ("Qwen2.5-VL-72B", "hf:Qwen/Qwen2.5-VL-72B-Instruct"),
    ]
    assert list(config.labels().values()) == [
        "LMM Score",
        "Self-Eval",
        "TIT-Score",
        "TIT-Score (4B)",
        "TIT-Score-Q 8B",
        "TIT-Score-Q 14B",
        "TIT-Score-G",
    ]
    models = {c.name: c.model for c in config.columns}
    assert models["tit_score_8b"] == "embed:Qwen/Qwen3-Embedding-8B"
    assert models["tit_score_4b"] == "embed:Qwen/Qwen3-Embedding-4B"
    assert (
        models["tit_llm_q14b"] == "hf:Qwen/Qwen3-14B"
        and models["tit_llm_g"] == "litellm:gemini/gemini-2.5-pro"
    )
    # Qwen3 judges answer without thinking; Gemini 2.5 Pro cannot stop, so its budget is explicit
    qwen = [c for c in config.columns if c.name.startswith("tit_llm_q")]
    assert qwen and all(c.thinking is not None and not c.thinking.enabled for c in qwen)
    gemini = [c for c in config.columns if c.name == "tit_llm_g"]
    assert gemini[0].thinking is not None and gemini[0].thinking.budget == 1024
    assert config.rows[0].thinking is not None and config.rows[0].thinking.budget == 128


def test_paper_grid_rows_and_columns_switch_off_by_name():
    config = load_ablation_config(
        REPO / "configs" / "paper-grid.yaml",
        ["describers.qwen25-vl-72b.enabled=false", "comparers.tit_llm_q14b.enabled=false"],
    )
    assert [r.name for r in config.rows][-1] == "qwen25-vl-32b" and len(config.rows) == 4
    assert "tit_llm_q14b" not in config.labels() and len(config.labels()) == 6


def test_offline_grid_validates():
    config = load_ablation_config(REPO / "configs" / "ablation-offline.yaml")
    assert len(config.rows) == 4 and config.data.manifest == Path(
        ".titjudge/offline/synth/manifest.jsonl"
    )
    assert [c.kind for c in config.columns] == ["lmm", "self_eval", "embedding", "llm", "lexical"]


def test_row_becomes_an_ordinary_run(tmp_path):
    config = load_ablation_config(write(tmp_path, SMALL))
    assert config.labels() == {
        "lmm_score": "LMM Score",
        "self_eval": "Self-Eval",
        "tit_score": "TIT-Score",
        "tit_llm_q8b": "TIT-Score-Qwen3-8B",
    }
    run = row_run_config(config, config.rows[1])
    assert run.name == "small.qwen-7b"
    assert run.describer.model == "hf:Qwen/Qwen2.5-VL-7B-Instruct" and run.describer.device == "cpu"
    assert [j.name for j in run.judges] == [
        "lmm_score",
        "self_eval",
        "tit_score",
        "tit_llm_q8b",
    ]  # lexical off
    assert run.judges[0].model is None and run.judges[1].max_tokens == 256  # bound to the row's VLM
    assert run.run.cache_dir == Path("cache") and run.data == config.data


def test_overrides_switch_rows_and_columns_off_by_name(tmp_path):
    config = load_ablation_config(
        write(tmp_path, SMALL),
        ["describers.gpt-4o.enabled=false", "comparers.lexical.enabled=true"],
    )
    assert [r.name for r in config.rows] == ["qwen-7b"]
    assert config.labels()["lexical"] == "Lexical"


def test_several_embedding_models_are_told_apart(tmp_path):
    text = SMALL.replace(
        "  - {name: lexical, kind: lexical, enabled: false}",
        '  - {name: tit_4b, kind: embedding, model: "embed:Qwen/Qwen3-Embedding-4B"}',
    )
    labels = load_ablation_config(write(tmp_path, text)).labels()
    assert labels["tit_score"] == "TIT-Score (Qwen3-Embedding-8B)"
    assert labels["tit_4b"] == "TIT-Score (Qwen3-Embedding-4B)"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('model: "litellm:openai/gpt-4o", rpm', 'modle: "litellm:openai/gpt-4o", rpm'),
            "unknown key 'describers.0.modle' (did you mean 'model'?)",
        ),
        (
            (
                "  - {name: lexical, kind: lexical, enabled: false}",
                "  - {name: lexical, kind: lexical, enabeld: false}",
            ),
            "unknown key 'comparers.4.enabeld' (did you mean 'enabled'?)",
        ),
        (
            (
                "{name: lmm_score, kind: lmm}",
                '{name: lmm_score, kind: lmm, model: "litellm:openai/gpt-4o"}',
            ),
            "ablation.yaml: comparers.0: comparer 'lmm_score' (lmm) uses each row's own VLM; remove 'model'",
        ),
        (
            (
                "{name: self_eval, kind: self_eval, max_tokens: 256}",
                "{name: self_eval, kind: self_eval, api_base: 'http://x/v1'}",
            ),
            "comparers.1: comparer 'self_eval' (self_eval) is reached the way each row's describer is; "
            "set api_base on the describers, not here",
        ),
        (("name: qwen-7b,", "name: gpt-4o,"), "describer names must be unique; repeated: 'gpt-4o'"),
        (
            ("name: qwen-7b,", "name: qwen2.5-7b,"),
            "describers.1.name: describer name 'qwen2.5-7b' contains '.', so `--set describers.qwen2.5-7b...` "
            "could not address it; use '-' or '_' instead (e.g. 'qwen25-7b')",
        ),
        (("human_pairs: data/p.csv", "ranks: data/r.csv"), "data.human_pairs is required"),
        (
            (
                "{name: tit_llm_q8b, kind: llm,",
                "{name: tit_llm_q8b, kind: llm, fallback: tit_scor,",
            ),
            "falls back to 'tit_scor', which is not an enabled comparer (did you mean 'tit_score'?)",
        ),
        (  # a jury over a column that is switched off would combine a variant with no scores
            (
                "  - {name: lexical, kind: lexical, enabled: false}\n",
                "  - {name: lexical, kind: lexical, enabled: false}\n"
                "  - {name: jury, kind: jury, members: [tit_score, lexical]}\n",
            ),
            "comparers: jury 'jury' combines 'lexical', which is switched off (enabled: false): "
            "a member with no scores",
        ),
        (
            (
                "  - {name: lexical, kind: lexical, enabled: false}\n",
                "  - {name: lexical, kind: lexical, enabled: false}\n"
                "  - {name: jury, kind: jury, members: [tit_score, tit_scor]}\n",
            ),
            "jury 'jury' names unknown judge 'tit_scor' (did you mean 'tit_score'?)",
        ),
    ],
)
def test_config_mistakes_name_the_key(tmp_path, change, message):
    old, new = change
    assert old in SMALL
    with pytest.raises(ConfigError) as err:
        load_ablation_config(write(tmp_path, SMALL.replace(old, new)))
    assert message in str(err.value)
    # one line per problem, each naming the file
    assert all(
        line.startswith(str(tmp_path / "ablation.yaml") + ": ")
        for line in str(err.value).splitlines()
    )


def test_bad_configs_exit_2_with_one_line(tmp_path, capsys, monkeypatch):
    bad_key = write(tmp_path, SMALL.replace("comparers:", "comparer:"))
    assert main(["ablation", str(bad_key)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'comparer' (did you mean 'comparers'?)" in err

    no_rows = write(
        tmp_path,
        SMALL.split("describers:")[0]
        + "describers: []\n"
        + "comparers:"
        + SMALL.split("comparers:")[1],
    )
    assert main(["ablation", str(no_rows)]) == 2
    err = capsys.readouterr().err
    assert "describers: list at least one describer" in err and err.startswith("titjudge: error: ")

    missing_data = write(
        tmp_path, SMALL
    )  # the manifest does not exist: a data problem, before any row runs
    # the preflight comes first: only models it passes here (a key, no uncached checkpoints)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    reachable = [
        *("--set", "describers.qwen-7b.enabled=false"),
        *("--set", "comparers.tit_score.enabled=false"),
        *("--set", "comparers.tit_llm_q8b.enabled=false"),
    ]
    assert main(["ablation", str(missing_data), "--out", str(tmp_path / "out"), *reachable]) == 2
    assert "data/m.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_command_keys_are_the_keys_only_one_schema_has():
    from titjudge.ablation.config import AblationConfig
    from titjudge.config.load import COMMAND_KEYS
    from titjudge.config.schema import RunConfig

    run, ablation = set(RunConfig.model_fields), set(AblationConfig.model_fields)
    assert set(COMMAND_KEYS["run"]) == run - ablation
    assert set(COMMAND_KEYS["ablation"]) == ablation - run


def test_run_config_handed_to_ablation_says_so_even_with_row_overrides(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text((REPO / "configs" / "vllm-qwen.yaml").read_text())
    with pytest.raises(ConfigError) as err:
        load_ablation_config(path, ["describers.qwen.enabled=false"])
    assert str(err.value) == (
        f"{path} is a run config (it has describer, judges); use titjudge run {path}"
    )


def test_a_mixed_config_gets_the_schema_errors_not_a_command_hint(tmp_path):
    text = SMALL + 'describer: {model: "litellm:openai/gpt-4o"}\n'
    with pytest.raises(ConfigError, match="unknown key 'describer'"):
        load_ablation_config(write(tmp_path, text))


def test_ablation_preflight_lists_rows_and_columns_models(tmp_path, monkeypatch):
    """Every enabled row's VLM and every enabled column's own model; describer-bound columns
    (lmm, self_eval) ride on their row, switched-off columns are left out."""
    from titjudge.ablation.config import ablation_model_uses

    config = load_ablation_config(write(tmp_path, SMALL), ["describers.qwen-7b.enabled=false"])
    assert [(u.model, u.user) for u in ablation_model_uses(config)] == [
        ("litellm:openai/gpt-4o", "row gpt-4o"),
        ("embed:Qwen/Qwen3-Embedding-8B", "comparer tit_score"),
        ("hf:Qwen/Qwen3-8B", "comparer tit_llm_q8b"),
    ]
    assert ablation_model_uses(config)[0].options.rpm == 60  # reached as the row says


def test_a_jury_over_a_column_switched_off_on_the_command_line_is_exit_2(tmp_path, capsys):
    """`--set comparers.<member>.enabled=false` leaves a jury a member with no scores: refused
    at load, one line, exit 2 (it reached the user as a pydantic traceback from the row's
    RunConfig before); nothing is run or written."""
    grid = SMALL.replace(
        "  - {name: lexical, kind: lexical, enabled: false}\n",
        "  - {name: lexical, kind: lexical}\n  - {name: jury, kind: jury, members: [lexical, tit_score]}\n",
    )
    path = write(tmp_path, grid)
    load_ablation_config(path)  # as written, a valid grid
    for command in (["ablation"], ["estimate"]):
        code = main([*command, str(path), "--set", "comparers.lexical.enabled=false"])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "jury 'jury' combines 'lexical', which is switched off" in err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()
