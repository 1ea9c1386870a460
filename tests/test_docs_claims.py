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
