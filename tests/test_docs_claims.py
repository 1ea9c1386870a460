"""Numbers in the README and the docs pages that restate a constant of the code say what the
code does (issue 30 found pacing 'at 98%' against HEADROOM 0.97 and images 'halved' above
4096 px against a bound to MAX_SIDE). The claims are read from every page together: a
sentence may move between pages, not disappear."""

from __future__ import annotations

import re
from pathlib import Path

from titjudge.models.calls.pacing import HEADROOM
from titjudge.records.images import MAX_SIDE

ROOT = Path(__file__).resolve().parents[1]
README = "\n".join(
    path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
)


def test_pacing_share_is_the_code_s() -> None:
    found = re.findall(r"spread evenly at (\d+)% of the limit", README)
    assert found == [f"{HEADROOM * 100:.0f}"]


def test_large_images_are_bounded_to_max_side() -> None:
    assert "halved" not in README
    assert f"so that its longest side is {MAX_SIDE} px" in README


def test_the_preflight_names_data_and_templates_with_the_keys() -> None:
    assert "the manifest, human pairs and ranks" in README
    assert "Everything missing is named in one line" in README


def test_the_structured_output_table_names_every_dialect_and_autos_order():
    from typing import get_args

    from titjudge.models.core.options import StructuredOutput
    from titjudge.models.litellm.dialects import AUTO_ORDER, DIALECTS

    rows = re.findall(r"^\| `(\w+)` \|", README, re.M)
    assert set(get_args(StructuredOutput)) == {*DIALECTS, "auto"} <= set(rows)
    # as the docs tell it
    assert AUTO_ORDER == ("json_schema", "json_object", "json_value", "prompt")
    told = " ".join(README.split())
    assert "as `json_schema`" in told
    assert "as `json_object` with a schema, then as `json_value` (TGI's), then with none" in told


def test_the_exit_codes_are_one_table_and_every_other_mention_points_to_it() -> None:
    import titjudge.cli as cli
    from titjudge.records import summary

    commands = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    before, table = commands.split("\n## Exit codes\n", 1)
    codes = [int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)]
    assert codes == sorted(summary.EXIT_CODES)
    # the command line's light copies of the numbers (its parser imports no record)
    for name in ("EXIT_OK", "EXIT_FAILED_ITEMS", "EXIT_BAD_INPUT", "EXIT_BUDGET"):
        assert getattr(cli, name) == getattr(summary, name)
    assert (cli.EXIT_DEGRADED, cli.EXIT_INTERRUPTED) == (
        summary.EXIT_DEGRADED,
        summary.EXIT_INTERRUPTED,
    )
    # every other "exit N" / "exits N" on a page is a link to the table (development.md logs
    # the CI script's own exit status, not titjudge's)
    others = [
        path.read_text(encoding="utf-8")
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        if path.name not in ("commands.md", "development.md")
    ]
    bare = [
        found.group(0)
        for text in [before, *others]
        for found in re.finditer(r"(\[?)\bexits? \d+\b(\]\((?:commands\.md)?#exit-codes\))?", text)
        if not (found.group(1) and found.group(2))
    ]
    assert bare == []
