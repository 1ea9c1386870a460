"""benchmarks/run_all.py keeps what it did not measure: the other runners' sections and the
sections written by hand after them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import run_all  # noqa: E402

OLD = """# titjudge benchmark results

<!-- section:long_tail [["m", "r", "b"]] -->
## 10. long tail
numbers
<!-- /section:long_tail -->

<!-- section:estimate [["e", "r", "b"]] -->
## 15. estimate
numbers
<!-- /section:estimate -->

## 18. A real server (by hand)

measured by hand
"""


def test_a_partial_rerun_keeps_the_other_sections_and_the_ones_written_by_hand(
    tmp_path: Path,
) -> None:
    old = tmp_path / "RESULTS.md"
    old.write_text(OLD)
    blocks = run_all.previous_blocks(old)
    assert set(blocks) == {"long_tail", "estimate"}
    blocks["long_tail"] = ([["m", "new", "b"]], "<!-- section:long_tail [] -->\nnew\n")
    text = run_all.render({}, (0, 0), "full", 60, blocks, ["long_tail"], run_all.hand_sections(old))
    assert "## 15. estimate" in text and "\nnew\n" in text
    assert text.rstrip().endswith("measured by hand")
    assert text.index("## 15. estimate") < text.index("## 18. A real server")


def test_a_section_that_lost_its_closing_line_is_refused_not_dropped(tmp_path: Path) -> None:
    old = tmp_path / "RESULTS.md"
    old.write_text(OLD.replace("<!-- /section:estimate -->\n", ""))
    with pytest.raises(ValueError, match="estimate have no closing"):
        run_all.previous_blocks(old)
