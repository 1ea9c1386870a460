"""MkDocs hook: the CLI and Python API reference pages, generated at build time from the code
itself, so they cannot drift from it.

- `<!-- cli-reference -->` in a page becomes every `titjudge` command's `--help`, from the
  argparse parsers (`titjudge.cli.build_parser`), subcommands included, at a fixed width.
- `<!-- python-api -->` becomes the signature and docstring of each name in `titjudge.__all__`.

The screenshots (`images/<name>.png`: the audit page, the annotate page, the Table 4
heat-map) are the ones the tests made in `ci-artifacts/` (`SCREENSHOTS` names each test);
where a test has not run on this machine, the page says which test makes the picture.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
from pathlib import Path
from typing import Any

WIDTH = "88"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "ci-artifacts"
#: pages kept beside their code, outside docs/, that the site shows as they are
BESIDE_THE_CODE = {
    "benchmarks/README.md": ROOT / "benchmarks" / "README.md",
    "benchmarks/RESULTS.md": ROOT / "benchmarks" / "RESULTS.md",
}
#: each picture in the docs and the test that makes it
SCREENSHOTS = {
    "audit.png": "tests/audit/test_audit_page.py",
    "annotate.png": "tests/annotate/test_annotate_browser.py",
    "table4.png": "tests/ablation/test_ablation_grid.py",
    "workbench-runs.png": "tests/workbench/test_workbench_browser.py",
    "workbench-pairs.png": "tests/workbench/test_workbench_browser.py",
    "workbench-pair.png": "tests/workbench/test_workbench_browser.py",
    "workbench-pictures.png": "tests/workbench/test_workbench_browser.py",
    "workbench-annotate.png": "tests/workbench/test_workbench_browser.py",
}
IMAGE = re.compile(r"!\[([^\]]*)\]\(images/([\w.-]+)\)")


def _commands(parser: argparse.ArgumentParser, path: list[str]) -> list[tuple[str, str]]:
    """(command line, help text) for `parser` and every subparser below it, depth first."""
    found = [(" ".join(path), parser.format_help())]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.extend(_commands(child, [*path, name]))
    return found


def cli_reference() -> str:
    """Markdown: one section per command, its `--help` verbatim."""
    from titjudge.cli import build_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH  # argparse wraps to the terminal's width
    try:
        commands = _commands(build_parser(), ["titjudge"])
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before
    parts = []
    for line, text in commands:
        level = "#" * min(len(line.split()) + 1, 4)
        parts.append(f"{level} `{line}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


def python_api() -> str:
    """Markdown: `titjudge`'s public functions, each with its signature and docstring."""
    import titjudge

    parts = []
    for name in titjudge.__all__:
        value = getattr(titjudge, name)
        if not callable(value):
            continue
        signature = inspect.signature(value)
        doc = inspect.getdoc(value) or ""
        parts.append(f"## `titjudge.{name}`\n\n```python\n{name}{signature}\n```\n\n{doc}\n")
    module_doc = inspect.getdoc(titjudge) or ""
    return f"```python\n{module_doc}\n```\n\n" + "\n".join(parts)


MARKERS = {"<!-- cli-reference -->": cli_reference, "<!-- python-api -->": python_api}


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """The tests' screenshots, as `images/<name>` of the site, and the pages kept beside
    their code (the benchmarks' method and results)."""
    from mkdocs.structure.files import File

    for uri, path in BESIDE_THE_CODE.items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    for name in SCREENSHOTS:
        path = ARTIFACTS / name
        if path.is_file():
            files.append(File.generated(config, f"images/{name}", abs_src_path=str(path)))
    return files


def _picture(match: re.Match[str]) -> str:
    alt, name = match.group(1), match.group(2)
    if name not in SCREENSHOTS:
        raise ValueError(f"images/{name}: no test makes it (docs/hooks/reference.py SCREENSHOTS)")
    if (ARTIFACTS / name).is_file():
        return match.group(0)
    return f"*({alt}: made by `{SCREENSHOTS[name]}`; build the site after the tests to see it.)*"


def on_page_markdown(markdown: str, **_: Any) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return IMAGE.sub(_picture, markdown)
