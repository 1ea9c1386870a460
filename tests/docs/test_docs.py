"""The README and the docs site (issue 38): a short README, every page in a strict MkDocs
build, every YAML example a config that loads (or marked a fragment), the shipped config the
README shows, and a CLI reference that names every option the parsers accept."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from doc_examples import NEEDS, RUNS, RUNS_AFTER_DEMO, RUNS_AGAINST_STAND_INS, examples, user_pages

from titjudge.cli import build_parser
from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
FRAGMENT = "<!-- fragment -->"
#: a fenced YAML block, with the line before it (a fragment is marked there)
YAML_BLOCK = re.compile(r"(?:^([^\n]*)\n)?```ya?ml\n(.*?)```", re.M | re.S)


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_at_most_10_kb_and_keeps_the_set_up_block_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 10 * 1024
    # .ci/run reads the fenced bash block under "## Set-up": two commands, tests then demo
    setup = re.search(r"^## Set-up.*?```bash\n(.*?)```", text, re.S | re.M)
    assert setup is not None
    lines = setup.group(1).strip().splitlines()
    assert len(lines) == 2 and "python -m pytest -q -n 2" in lines[0]
    assert lines[1] == "titjudge demo"


def test_getting_started_gives_the_readmes_two_commands() -> None:
    def setup(text: str) -> str:
        found = re.search(r"```bash\n(python3 -m venv.*?)```", text, re.S)
        assert found is not None
        return found.group(1)

    started = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    assert setup(started) == setup(README.read_text(encoding="utf-8"))


def test_the_readme_shows_the_shipped_config_as_shipped() -> None:
    """The README's config is configs/tit-llm-gemini.yaml byte for byte, and it loads."""
    shipped = (ROOT / "src" / "titjudge" / "configs" / "tit-llm-gemini.yaml").read_text()
    blocks = [m.group(2) for m in YAML_BLOCK.finditer(README.read_text(encoding="utf-8"))]
    assert shipped in blocks
    config = validate_config(yaml.safe_load(shipped), RunConfig, "README.md")
    assert config.describer.max_tokens == 512  # the paper's answer budget
    assert config.describer.thinking is not None and config.describer.thinking.budget == 128


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_example_loads_as_a_config_or_is_marked_a_fragment(page: Path) -> None:
    for match in YAML_BLOCK.finditer(page.read_text(encoding="utf-8")):
        before, block = match.group(1) or "", match.group(2)
        found = yaml.safe_load(block)
        assert isinstance(found, dict), f"{page.name}: a YAML example that is not a mapping"
        if before.strip() == FRAGMENT:
            continue
        if "describers" in found or "comparers" in found:
            from titjudge.ablation.config import AblationConfig

            validate_config(found, AblationConfig, page.name)
        else:
            validate_config(found, RunConfig, page.name)


def test_every_shell_and_python_example_runs_here_or_says_what_it_needs() -> None:
    """Each is marked to run (tests/docs/test_examples.py runs it) or says what it needs."""
    blocks = examples()
    assert len(blocks) > 15
    unmarked = [b.where for b in blocks if b.marker not in RUNS and not NEEDS.match(b.marker)]
    assert not unmarked, unmarked
    assert sum(b.marker == RUNS_AFTER_DEMO for b in blocks) >= 3
    assert sum(b.marker == RUNS_AGAINST_STAND_INS for b in blocks) >= 8


def test_a_config_the_docs_show_under_a_shipped_configs_name_is_that_config() -> None:
    """The docs once showed a `tit-llm-gemini` config that was not the shipped one."""
    shipped = {
        yaml.safe_load(path.read_text())["name"]: yaml.safe_load(path.read_text())
        for path in (ROOT / "src" / "titjudge" / "configs").glob("*.yaml")
    }
    shown = 0
    for page in pages():
        for match in YAML_BLOCK.finditer(page.read_text(encoding="utf-8")):
            found = yaml.safe_load(match.group(2))
            if isinstance(found, dict) and found.get("name") in shipped:
                assert found == shipped[found["name"]], (page.name, found["name"])
                shown += 1
    assert shown >= 1  # the README's


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found.extend(_parsers(child))
    return found


def test_the_cli_reference_names_every_command_and_option_the_parsers_accept() -> None:
    text = reference().cli_reference()
    parsers = _parsers(build_parser())
    assert len(parsers) > 15  # titjudge, its commands and their subcommands
    for parser in parsers:
        assert f"`{parser.prog}`" in text, parser.prog
        for action in parser._actions:
            for option in action.option_strings:
                assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), (
                    parser.prog,
                    option,
                )


def test_the_python_api_page_shows_every_public_function_with_its_docstring() -> None:
    import inspect

    import titjudge

    text = reference().python_api()
    for name in titjudge.__all__:
        value = getattr(titjudge, name)
        if callable(value):
            assert f"## `titjudge.{name}`" in text
            assert (inspect.getdoc(value) or "").splitlines()[0] in text


def test_each_screenshot_is_shown_when_its_test_made_it_and_named_when_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = reference()
    shown = "".join(page.read_text(encoding="utf-8") for page in user_pages())
    assert {m.group(2) for m in hook.IMAGE.finditer(shown)} == set(hook.SCREENSHOTS)
    monkeypatch.setattr(hook, "ARTIFACTS", tmp_path)
    (tmp_path / "audit.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    page = "![The audit page](images/audit.png) ![Table 4](images/table4.png)"
    out = hook.on_page_markdown(page)
    assert "![The audit page](images/audit.png)" in out  # made: shown
    assert "images/table4.png" not in out and "tests/ablation/test_ablation_grid.py" in out
    with pytest.raises(ValueError, match="no test makes it"):
        hook.on_page_markdown("![a picture by hand](images/by-hand.png)")


def test_every_relative_link_of_the_readme_points_at_a_file() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert local
    for link in local:
        assert (ROOT / link).is_file(), link


@pytest.mark.slow  # a child process building the whole site (about 3 s)
def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a broken link or anchor, a page missing from the nav or a
    reference hook that fails is an error."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cli = (tmp_path / "site" / "cli" / "index.html").read_text()
    assert "titjudge ablation" in cli and "--set" in cli  # the hook filled the page
    assert (tmp_path / "site" / "python-api" / "index.html").is_file()
