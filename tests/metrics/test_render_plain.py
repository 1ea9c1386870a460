"""The metrics tables print names and legends whole and literally, at any terminal width."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from titjudge.metrics.summary import MetricSettings
from titjudge.metrics.summary import metrics_record as evaluate
from titjudge.records.items import HumanPair, Item, RankRow, ScoreRow
from titjudge.report.record import parse_record
from titjudge.report.render import SIGNIFICANCE_HEADER, print_summary

LONG = "pairwise_gemini_2_5_pro_with_fallback"
ODD = "x[bold]"


def _summary(bootstrap: int = 20) -> dict:
    order = ["a", "b", "c", "d"]
    items = [Item(i, "p", "prompt", Path(f"/{i}.png"), f"model_{i}") for i in order]
    pairs = [HumanPair("p", x, y, "a") for n, x in enumerate(order) for y in order[n + 1 :]]
    ranks = [RankRow("p", i, n + 1) for n, i in enumerate(order)]
    rows = [
        ScoreRow(i, name, float(4 - n) * scale, "ok")
        for name, scale in ((LONG, 1.0), (ODD, 0.5))
        for n, i in enumerate(order)
    ]
    return evaluate(rows, pairs, ranks, items, settings=MetricSettings(bootstrap=bootstrap, seed=0))


def _render(width: int) -> str:
    # markup on (the default), as on the console `titjudge run` prints to
    console = Console(width=width, record=True, color_system=None)
    print_summary(_summary(), console)
    return console.export_text()


def _first_column(table: str) -> str:
    """The first column of the first table, its folded pieces joined."""
    pieces = []
    for line in table.splitlines():
        cells = re.split("[│┃]", line)
        if len(cells) > 2:
            pieces.append(cells[1].strip())
        elif pieces and line.startswith("└"):
            break
    return "".join(pieces)


def test_names_are_whole_and_literal_at_width_60() -> None:
    text = _render(60)
    column = _first_column(text)
    assert LONG in column  # folded across lines, never cut to "pairw…"
    assert ODD in column  # "[bold]" is data, not a style tag
    assert "…" not in text


def test_ci_legend_keeps_its_bracketed_prefix() -> None:
    text = _render(200)
    assert "[brackets]: 95% bootstrap CI over prompts (20 resamples, seed 0)" in text


def test_every_column_has_a_header() -> None:
    text = _render(250)
    header = next(line for line in text.splitlines() if "variant" in line)
    cells = [c.strip() for c in re.split("[┃│]", header)[1:-1]]
    assert SIGNIFICANCE_HEADER in cells
    assert all(cells), cells


def test_a_pairwise_judge_line_reads_its_position_bias_from_the_record():
    """A pairwise variant's line shows its position bias and order agreement as its record
    holds them (the `pairwise` block of metrics.json, read typed)."""
    doc = _summary().metrics_json()
    variant = doc["variants"][LONG]
    variant["accuracy_source"] = "verdicts"
    variant["pairwise"] = {
        "n_order_verdicts": 12,
        "n_decisive": 10,
        "n_first_wins": 8,
        "n_second_wins": 2,
        "first_position_win_share": 0.8,
        "position_bias_rate": 0.6,
        "position_bias_p_value": 0.109375,
        "n_pairs_both_orders": 6,
        "order_agreement_rate": 0.5,
        "n_order_disagreements": 3,
    }
    record = parse_record(doc, "metrics.json")
    bias = record.variants[LONG].pairwise
    assert bias is not None and (bias.n_first_wins, bias.order_agreement_rate) == (8, 0.5)
    assert record.variants[ODD].pairwise is None
    console = Console(width=400, record=True, color_system=None)
    print_summary(record, console)
    line = next(x for x in console.export_text().splitlines() if x.startswith(f"{LONG}:"))
    assert "the first-shown image won 8 of 10 decisive single-order verdicts" in line
    assert "(position bias +0.60, p 0.109)" in line and "orders agreed on 50.0% of pairs" in line
