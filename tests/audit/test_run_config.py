"""config.yaml is one typed record (`records.run_config.RunConfigFile`): written by the run,
read back typed by `load_run(dir).config`, the audit, `compare` and `metrics RUN_DIR`
(issue 49); an older run dir's config.yaml still loads, a broken one is one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import titjudge
from titjudge.errors import DataError
from titjudge.records.run_config import RunConfigFile, TemplateFacts

#: what the first release wrote (ff1a319's runner: the config, then `resolved` without
#: `swapped`), with a key no release knows now: it must load and keep both
OLD_CONFIG = {
    "name": "old",
    "data": {"manifest": "data/manifest.jsonl", "human_pairs": "data/pairs.csv"},
    "describer": {"model": "replay:descriptions.jsonl", "max_tokens": 512},
    "judges": [{"name": "lexical", "kind": "lexical", "fallback": None, "retired": True}],
    "run": {"concurrency": 4},
    "resolved": {
        "describer": {"kind": "replay", "template": {"name": "describe_detailed", "sha256": "ab"}},
        "judges": [{"name": "lexical", "kind": "lexical"}],
        "models": [],
        "items": 12,
        "limit": None,
        "packages": {"titjudge": "0.1.0"},
    },
}


def test_a_demo_run_reads_its_config_back_typed(pipeline_run: Path):
    config = titjudge.load_run(pipeline_run).config
    assert isinstance(config, RunConfigFile)
    assert config.name == config.doc["name"] and config.name
    assert [judge.kind for judge in config.judges] == [j["kind"] for j in config.doc["judges"]]
    assert config.data_path("manifest") == config.doc["data"]["manifest"]
    assert config.resolved is not None and config.resolved.items == config.doc["resolved"]["items"]
    template = config.resolved.describer.template  # type: ignore[union-attr]
    assert isinstance(template, TemplateFacts) and template.sha256
    assert "titjudge" in config.resolved.packages


def test_written_from_the_mapping_it_was_read_from_byte_for_byte(pipeline_run: Path, tmp_path):
    written = (pipeline_run / "config.yaml").read_bytes()
    RunConfigFile.read(pipeline_run).write(tmp_path)
    assert (tmp_path / "config.yaml").read_bytes() == written


def test_an_older_config_yaml_loads_and_keeps_the_keys_it_does_not_know(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(OLD_CONFIG, sort_keys=False))
    config = RunConfigFile.read(tmp_path)
    assert config.name == "old" and config.resolved is not None
    assert config.resolved.swapped is None and config.resolved.items == 12
    assert config.judge("lexical").kind == "lexical"  # type: ignore[union-attr]
    assert config.judges[0].model_extra == {"retired": True}
    assert config.doc == OLD_CONFIG
    assert RunConfigFile.read(tmp_path / "nowhere").name == ""  # no config.yaml: empty


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"name": "x", "judges": [{"kind": "llm"}]}, "judges.0.name"),
        ({"name": "x", "data": {"manifest": 5}}, "data.manifest"),
        ({"name": "x", "resolved": {"items": "many"}}, "resolved.items"),
    ],
)
def test_a_config_yaml_that_does_not_fit_is_one_line_naming_file_and_key(tmp_path, doc, where):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(DataError) as raised:
        RunConfigFile.read(tmp_path)
    message = str(raised.value)
    assert "\n" not in message and str(tmp_path / "config.yaml") in message and where in message


def test_compare_names_each_run_from_its_typed_config(pipeline_run: Path, tmp_path):
    from titjudge.report.analysis.compare import compare_runs
    from titjudge.report.analysis.run import RunData

    copy = tmp_path / "copy"
    shutil.copytree(pipeline_run, copy)
    found = compare_runs([RunData.load(pipeline_run), RunData.load(copy)], ["r1", "r2"])
    assert [run["name"] for run in found.runs] == [RunConfigFile.read(pipeline_run).name] * 2
    assert found.config_changes == []
