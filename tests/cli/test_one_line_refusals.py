"""Every refusal is one line on stderr and exit 2 (issue 48): argparse's own errors (a value of
the wrong type, a choice not offered, a missing argument, an unknown option or command) at
every level of the command tree, several unknown config keys together, and a misspelt key
without a spurious "missing required key" beside its did-you-mean. `--help` keeps argparse's
usage. Each command line runs in a child process of its own (tests/cli_process.py), as a user
types it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_process import run_cli

CONFIG = {
    "name": "refusals",
    "data": {"manifest": "manifest.jsonl"},
    "describer": {"model": "litellm:openai/gpt-4o"},
    "judges": [{"name": "lexical", "kind": "lexical"}],
}

#: (command line, what the one line must name); CONFIG stands for a valid config's path
ARGPARSE_CASES = {
    "a number that is not": (
        ["run", "CONFIG", "--progress-every", "abc"],
        "titjudge run: error: argument --progress-every: expected a number of seconds",
    ),
    "a choice not offered": (
        ["export", "--format", "xml", "some-run"],
        "titjudge export: error: argument --format: invalid choice: 'xml' (choose from "
        "'parquet', 'csv')",
    ),
    "an integer that is not": (
        ["data", "synth", "--prompts", "x", "--models", "2", "--out", "d"],
        "titjudge data synth: error: argument --prompts: invalid int value: 'x'",
    ),
    "a missing argument": (
        ["run"],
        "titjudge run: error: the following arguments are required: config",
    ),
    "a missing action": (["runs"], "titjudge runs: error: the following arguments are required"),
    "an unknown command": (["bogus"], "titjudge: error: argument COMMAND: invalid choice"),
    "an unknown option": (
        ["cache", "stats", "--bogus"],
        "titjudge: error: unrecognized arguments: --bogus",
    ),
    "a bad --limit": (
        ["estimate", "CONFIG", "--limit", "ten"],
        "titjudge estimate: error: argument --limit: invalid int value: 'ten'",
    ),
}


def one_line(args: list[str], cwd: Path) -> str:
    done = run_cli(args, cwd=cwd, env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "usage:" not in done.stderr and "Traceback" not in done.stderr
    return lines[0]


@pytest.mark.slow  # a child process per command line
@pytest.mark.parametrize("case", sorted(ARGPARSE_CASES))
def test_an_argument_refused_by_the_parser_is_one_line(case: str, tmp_path: Path) -> None:
    args, expected = ARGPARSE_CASES[case]
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(CONFIG))
    line = one_line([("c.yaml" if a == "CONFIG" else a) for a in args], tmp_path)
    assert line.startswith(expected), line
    assert line.endswith(f"(see {expected.partition(': error')[0]} --help)"), line


@pytest.mark.slow  # a child process
def test_help_still_prints_the_usage(tmp_path: Path) -> None:
    done = run_cli(["run", "--help"], cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: titjudge run") and "--progress-every" in done.stdout


def write_config(tmp_path: Path, **describer: object) -> str:
    config = {**CONFIG, "describer": {**CONFIG["describer"], **describer}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    return "c.yaml"


@pytest.mark.slow  # a child process
def test_seven_unknown_keys_are_named_on_one_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, temprature=0, aa=1, bb=2)
    sets = ["judges.0.cc=1", "judges.0.dd=1", "run.zz=1", "ff=1"]
    line = one_line(["explain", path, *(a for s in sets for a in ("--set", s))], tmp_path)
    assert line == (
        "titjudge: error: c.yaml: unknown keys 'describer.aa', 'describer.bb', "
        "'describer.temprature' (did you mean 'temperature'?), 'judges.0.cc', 'judges.0.dd', "
        "'run.zz' and 'ff'"
    )


@pytest.mark.slow  # a child process
def test_a_misspelt_key_is_named_once_by_its_did_you_mean(tmp_path: Path) -> None:
    path = write_config(tmp_path, price={"inptu": 1, "output": 2})
    line = one_line(["explain", path], tmp_path)
    assert line == (
        "titjudge: error: c.yaml: unknown key 'describer.price.inptu' (did you mean 'input'?)"
    )
    # a key that is missing and that no typo meant is still named, on the same line
    path = write_config(tmp_path, price={"inptu": 1})
    line = one_line(["explain", path], tmp_path)
    assert line == (
        "titjudge: error: c.yaml: missing required key 'describer.price.output'; "
        "unknown key 'describer.price.inptu' (did you mean 'input'?)"
    )
