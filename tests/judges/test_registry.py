"""Judge kinds come from the registry: each kind's config takes only what it reads, mistakes
are named against that kind's fields, and a kind registered in one file is a working kind."""

import json
import os
import subprocess
import sys
import textwrap
from typing import Literal

import pytest

from titjudge.ablation.config import ComparerColumn
from titjudge.config.load import dump_config, validate_config
from titjudge.config.schema import JudgeConfig, RunConfig
from titjudge.errors import ConfigError
from titjudge.files import load_yaml
from titjudge.judges.lexical import LexicalJudge
from titjudge.judges.options import JudgeOptions
from titjudge.judges.registry import judge_kind, kinds

DESCRIBER = {"model": "litellm:openai/vlm"}
LLM = {"name": "j", "kind": "llm", "model": "litellm:openai/judge"}


def run_config(*judges):
    raw = {"name": "r", "describer": DESCRIBER, "judges": list(judges)}
    return validate_config(raw, RunConfig, "run.yaml")


def refusal(*judges) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        run_config(*judges)
    return str(caught.value).splitlines()


def test_every_kind_is_registered_once_with_its_own_config():
    registered = kinds()
    assert set(registered) == {
        "llm",
        "self_eval",
        "embedding",
        "clip",
        "lmm",
        "lmm_yes",
        "lexical",
        "pairwise",
        "checklist",
        "jury",
    }
    configs = [kind.config for kind in registered.values()]
    assert len(set(configs)) == len(configs)
    assert {name for name, kind in registered.items() if kind.describer_bound} == {
        "lmm",
        "self_eval",
        "lmm_yes",
    }
    assert set(registered["lexical"].config.model_fields) == {"name", "kind", "fallback"}


def test_a_lexical_judge_refuses_model_options():
    (line,) = refusal(
        {"name": "lex", "kind": "lexical", "temperature": 0.5, "rpm": 10, "api_base": "x"}
    )
    problems = line.removeprefix("run.yaml: ").split("; ")  # one line, every problem on it
    assert len(problems) == 3 and all(p.startswith("judges.0.") for p in problems)
    for key in ("temperature", "rpm", "api_base"):
        assert any(f"'{key}' applies to" in p and "not 'lexical'" in p for p in problems)
    temperature = next(p for p in problems if "'temperature'" in p)
    assert "llm" in temperature and "embedding" not in temperature  # embeddings take none


def test_a_typo_is_matched_against_that_kinds_fields():
    assert refusal({**LLM, "tempreature": 0.5}) == [
        "run.yaml: unknown key 'judges.0.tempreature' (did you mean 'temperature'?)"
    ]
    checklist = {**LLM, "kind": "checklist", "weigths": {"entity": 1}}
    assert refusal(checklist) == [
        "run.yaml: unknown key 'judges.0.weigths' (did you mean 'weights'?)"
    ]
    # an llm judge has no 'weights', so the typo finds nothing close among its own fields
    assert refusal({**LLM, "weigths": {"entity": 1}}) == [
        "run.yaml: unknown key 'judges.0.weigths'"
    ]


def test_an_option_of_another_kind_says_whose_it_is():
    assert refusal({**LLM, "instruction": "Retrieve"}) == [
        "run.yaml: judges.0.instruction: 'instruction' applies to embedding judges, not 'llm'"
    ]
    lines = refusal({**LLM, "kind": "pairwise", "max_tokens": 64, "score_mode": "sampled"})
    assert lines == [
        "run.yaml: judges.0.score_mode: score_mode 'sampled' applies to llm, self_eval and lmm "
        "judges, not 'pairwise'"
    ]


def test_an_unknown_kind_gets_a_registered_kind_suggested():
    assert refusal({**LLM, "kind": "embeding"}) == [
        "run.yaml: judges.0.kind: unknown kind 'embeding' (did you mean 'embedding'?)"
    ]
    assert refusal({"name": "j"}) == ["run.yaml: missing required key 'judges.0.kind'"]


@pytest.mark.parametrize("kind", sorted(kinds()))
def test_a_dumped_config_reloads_the_same(kind, tmp_path):
    judge = {"name": "j", "kind": kind}
    members = []
    if kind == "jury":  # a jury combines other judges of the run
        judge["members"] = ["m1", "m2"]
        members = [{"name": m, "kind": "lexical"} for m in ("m1", "m2")]
    elif not kinds()[kind].describer_bound and kind != "lexical":
        judge["model"] = {"embedding": "embed:x", "clip": "clip:openai/clip-vit-base-patch32"}.get(
            kind, "litellm:openai/judge"
        )
    config = run_config(judge, *members)
    path = tmp_path / "dumped.yaml"
    path.write_text(dump_config(config))
    assert validate_config(load_yaml(path), RunConfig, str(path)) == config
    assert validate_config(config.judges[0].model_dump(), JudgeConfig, "j.yaml") == config.judges[0]


def test_comparer_columns_extend_every_kind():
    assert all(issubclass(kind.config, JudgeOptions) for kind in kinds().values())
    assert {"label", "enabled"} <= set(ComparerColumn.model_fields)


class _LateConfig(JudgeOptions):
    kind: Literal["late"]


def test_a_kind_registered_after_the_run_config_is_refused():
    with pytest.raises(RuntimeError, match="registered after the run config was built"):
        judge_kind("late", config=_LateConfig, label="Late")(
            lambda config, *args: LexicalJudge(config)
        )
    assert "late" not in kinds()


NEW_KIND = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from typing import Literal

    from titjudge.judges.base import Judge
    from titjudge.records.outcomes import Described, JudgeInput, JudgeOutcome
    from titjudge.judges.options import JudgeOptions
    from titjudge.judges.registry import judge_kind
    from titjudge.models.core.clients import SEND


    class ConstantConfig(JudgeOptions):
        kind: Literal["constant"]
        value: float = 0.5


    class ConstantJudge(Judge):
        async def score(self, given, *, probe):
            return JudgeOutcome(variant=self.name, status="ok", score=self.config.value)


    @judge_kind("constant", config=ConstantConfig, label="Constant {model}")
    def build_constant(config, building):
        return ConstantJudge(config)


    from titjudge.cache.store import CallCache
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.errors import ConfigError
    from titjudge.judges.registry import build_judges
    from titjudge.models.hub import ModelHub

    raw = {"name": "r", "describer": {"model": "litellm:openai/vlm"},
           "judges": [{"name": "c", "kind": "constant", "value": 0.25},
                      {"name": "lex", "kind": "lexical"}]}
    config = validate_config(raw, RunConfig, "run.yaml")
    hub = ModelHub(CallCache(Path(sys.argv[1])))
    judges = build_judges(config.judges, config.describer.model, config.describer, hub)
    outcome = asyncio.run(judges[0].judge(JudgeInput(None, None, Described(text="x")), probe=SEND))
    raw["judges"][0]["valeu"] = 1
    try:
        validate_config(raw, RunConfig, "run.yaml")
        refused = None
    except ConfigError as exc:
        refused = str(exc)
    print(json.dumps({"types": [type(j).__name__ for j in judges], "score": outcome.score,
                      "refused": refused}))
    """
)


@pytest.mark.slow
def test_a_kind_registered_in_one_file_is_accepted_and_built(tmp_path):
    script = tmp_path / "constant_kind.py"
    script.write_text(NEW_KIND)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {
        "types": ["ConstantJudge", "LexicalJudge"],
        "score": 0.25,
        "refused": "run.yaml: unknown key 'judges.0.valeu' (did you mean 'value'?)",
    }
