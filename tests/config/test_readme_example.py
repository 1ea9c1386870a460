"""The configuration a new user copies from README.md is a valid config."""

import re
from pathlib import Path

import yaml

from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example_config_validates():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(name: tit-llm-gemini\n.*?)```", text, re.S)
    assert block, "README lost its example config"
    config = validate_config(yaml.safe_load(block.group(1)), RunConfig, "README.md")
    assert config.describer.max_tokens == 512  # the paper's answer budget
    assert config.describer.thinking is not None and config.describer.thinking.budget == 128
