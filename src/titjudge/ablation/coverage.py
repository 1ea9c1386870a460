"""What each cell of the ablation tables stands on, and what that lets the tables claim.

Every cell is computed over its own share of the human data: pairwise accuracy over the
non-tie human pairs with both images scored (`n_pairs`), SRCC/KRCC over the prompts where
they are defined (`n_prompts`), nDCG likewise (`n_prompts_ndcg`). A judge that failed on
items leaves its cell fewer, and a few pairs can land anywhere: 4 of 5 correct is 80%. So
every table prints each value's n, and two rules keep a thin cell from reading as a result:

- a value is marked best or second only when its cell scored at least MARK_MIN_PERCENT (90%)
  of the pairs of the best-covered cell of the grid (for SRCC/KRCC and nDCG, also 90% of
  the prompts of the cell with the most); a thinner cell keeps its value, unmarked;
- a chance threshold is quoted for each pair count the table shows, so every cell's n has its
  own (`significance_thresholds`, the one `metrics` marks runs with).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from titjudge.metrics.significance import significance_thresholds
from titjudge.records.percent import percent

if TYPE_CHECKING:
    from titjudge.records import CellResult
    from titjudge.records.run_record import Thresholds

#: a cell with fewer than this share (%) of the best-covered cell's pairs is never marked
MARK_MIN_PERCENT = 90


def covered(n: int, reference: int) -> bool:
    """`n` is at least MARK_MIN_PERCENT% of `reference` (whole numbers: no rounding)."""
    return reference > 0 and 100 * n >= MARK_MIN_PERCENT * reference


def best_covered(cells: Iterable[CellResult], key: str = "n_pairs") -> int:
    """The largest `key` count among cells with a value (0 when none has one)."""
    return max((c.count(key) for c in cells if c.has_value), default=0)


def markable(
    cells: Sequence[CellResult], grid: Sequence[CellResult], prompts: str | None = None
) -> list[bool]:
    """Per cell: may its value be marked? Its pairs (and, with `prompts`, that prompt count)
    must each reach MARK_MIN_PERCENT% of the best-covered cell of `grid`."""
    pairs = best_covered(grid)
    most = best_covered(grid, prompts) if prompts else 0
    return [
        covered(c.count("n_pairs"), pairs) and (prompts is None or covered(c.count(prompts), most))
        for c in cells
    ]


def rule_text(reference: int) -> str:
    """The marking rule as the legends state it."""
    return (
        f"A cell with fewer than {MARK_MIN_PERCENT}% of the pairs of the best-covered cell "
        f"({reference:,}) is never marked."
    )


def pairs_text(n: int) -> str:
    return f"{n:,} pair" + ("" if n == 1 else "s")


def _beats(thresholds: Thresholds) -> tuple[float | None, float | None]:
    """The accuracy that beats chance at 95% and at 99.9% on `thresholds.n_pairs` pairs; None
    where the level needs more correct pairs than there are (a handful of pairs can never
    beat chance at 99.9%)."""
    n = thresholds.n_pairs

    def reachable(k: int | None, accuracy: float | None) -> float | None:
        return None if k is None or accuracy is None or k > n else accuracy

    return (
        reachable(thresholds.k_95, thresholds.acc_95),
        reachable(thresholds.k_999, thresholds.acc_999),
    )


def _reach(accuracy: float | None) -> str:
    """'at least 51.37%', or 'no accuracy' when the level cannot be reached."""
    return "no accuracy" if accuracy is None else f"at least {percent(accuracy, 2)}"


def chance_text(cells_by_count: Mapping[int, Sequence[str]]) -> str:
    """The chance thresholds for every pair count shown, naming the cells of all but the
    largest: a cell is held to the threshold of its own n, never to that of the full data."""
    counts = sorted((n for n in cells_by_count if n > 0), reverse=True)
    if not counts:
        return "50% is chance."
    if len(counts) == 1:
        at_95, at_999 = _beats(significance_thresholds(counts[0]))
        return (
            f"50% is chance; on {counts[0]:,} human pairs, {_reach(at_95)} beats chance "
            f"at 95% and {_reach(at_999)} at 99.9% (one-sided)."
        )
    parts = []
    for index, n in enumerate(counts):
        at_95, at_999 = _beats(significance_thresholds(n))
        names = "" if index == 0 else f" ({', '.join(cells_by_count[n])})"
        parts.append(f"on {pairs_text(n)}{names}, {_need(at_95)} / {_need(at_999)}")
    text = "; ".join(parts)
    why = " ('unreachable': more correct pairs than it has)" if "unreachable" in text else ""
    return (
        f"50% is chance. To beat it at 95% / 99.9% (one-sided), a cell needs at least: {text}{why}."
    )


def _need(accuracy: float | None) -> str:
    """'51.37%', or 'unreachable' when the level cannot be reached."""
    return "unreachable" if accuracy is None else percent(accuracy, 2)
