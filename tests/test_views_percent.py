"""One percentage formatter (`records.percent`): every view prints a fraction through it, and
no module of src/ formats `100 * x` with a '%' of its own."""

from __future__ import annotations

import re
from pathlib import Path

from titjudge.metrics.catalog import by_name
from titjudge.records.origins import VariantOrigin
from titjudge.records.percent import percent, percent_of

SRC = Path(__file__).resolve().parents[1] / "src" / "titjudge"
#: an f-string that multiplies by 100 and puts '%' after it: a formatter of its own
OWN_FORMATTER = re.compile(r"\{100(\.0)? \* [^}]*\}%|\{[^}]* \* 100(\.0)?[^}]*\}%")
#: the ones left, with the reason: `cache stats` computes 100 * hits / total (one rounding;
#: percent(hits / total) would round twice); the bootstrap legend prints the level with :g
ALLOWED = {"cli/cache.py", "report/render.py"}


def test_percent_prints_as_every_view_did() -> None:
    assert percent(0.887159533) == "88.7%"
    assert percent(0.887159533, 2) == "88.72%"
    assert percent(None) == "—" and percent(None, 2, missing="-") == "-"
    assert percent(0.5, 0) == "50%" and percent(0.76667, 2, sign="") == "76.67"
    assert percent_of(None) is None and percent_of(0.25) == 25.0


def test_the_metric_catalog_and_the_fallback_share_print_through_it() -> None:
    assert by_name("pairwise_accuracy").shown(0.8287937743190662) == "82.88%"
    assert by_name("metric_tie_rate").shown(None) == "-"
    origin = VariantOrigin(n_scored=48, n_fallback=30, fallback_share=0.625)
    assert origin.percent() == "62%"  # round half to even, as f"{62.5:.0f}" always did


def test_no_module_formats_a_percentage_of_its_own() -> None:
    found = [
        f"{path.relative_to(SRC)}:{number}"
        for path in sorted(SRC.rglob("*.py"))
        if str(path.relative_to(SRC)) not in ALLOWED and path.name != "percent.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OWN_FORMATTER.search(line)
    ]
    assert not found, f"format percentages with titjudge.records.percent.percent: {found}"
