"""Chance thresholds (the paper's A.2 rule, k rounded up), exact binomial p-values, marks."""

from __future__ import annotations

import math

import pytest
from rich.console import Console

from titjudge.metrics.significance import (
    binomial_p_value,
    significance_mark,
    significance_thresholds,
)
from titjudge.metrics.summary import MetricSettings
from titjudge.metrics.summary import metrics_record as evaluate
from titjudge.records.items import HumanPair, RankRow, ScoreRow
from titjudge.records.run_record import RunRecord
from titjudge.report.render import print_summary, threshold_line


def test_paper_thresholds_for_12832_pairs() -> None:
    t = significance_thresholds(12_832)
    assert t.mean == 6_416
    assert t.sd == pytest.approx(56.64, abs=0.005)  # paper: "about 56.64"
    # 6416 + 1.644854 * 56.6392 = 6509.16 -> 6,510 correct pairs; 6416 + 3.090232 * 56.6392
    # = 6591.03 -> 6,592 (the paper's A.2 rounds k up)
    assert t.acc_95 * 12_832 == pytest.approx(6_510, abs=1e-6)
    assert t.acc_999 * 12_832 == pytest.approx(6_592, abs=1e-6)
    assert t.acc_95 == pytest.approx(0.507325, abs=1e-6)
    assert t.acc_999 == pytest.approx(0.513716, abs=1e-6)


def test_thresholds_without_pairs_are_none() -> None:
    t = significance_thresholds(0)
    assert t.acc_95 is None and t.acc_999 is None


def test_exact_binomial_p_values_by_hand() -> None:
    # P(X >= 8 | n=10, p=.5) = (C(10,8) + C(10,9) + C(10,10)) / 2^10 = 56 / 1024
    assert binomial_p_value(8, 10) == pytest.approx(56 / 1024, rel=1e-12)
    assert binomial_p_value(0, 10) == pytest.approx(1.0)
    assert binomial_p_value(10, 10) == pytest.approx(1 / 1024, rel=1e-12)
    # at the paper's 95% threshold the exact p-value is close to 0.05
    p = binomial_p_value(math.ceil(6_509.16), 12_832)
    assert p is not None and 0.04 < p < 0.055


def test_binomial_edge_cases() -> None:
    assert binomial_p_value(0, 0) is None
    with pytest.raises(ValueError, match="n_correct"):
        binomial_p_value(11, 10)


def test_paper_a2_thresholds_round_k_up() -> None:
    t = significance_thresholds(12_832)
    assert (t.k_95, t.k_999) == (6_510, 6_592)
    assert t.acc_95 == 6_510 / 12_832 and t.acc_999 == 6_592 / 12_832
    assert f"{100 * t.acc_95:.2f}% {100 * t.acc_999:.2f}%" == "50.73% 51.37%"
    assert t.p_95 == binomial_p_value(6_510, 12_832) and t.p_999 == binomial_p_value(6_592, 12_832)
    assert t.p_95 is not None and 0.04 < t.p_95 < 0.05
    assert t.p_999 is not None and 0.0008 < t.p_999 < 0.001


@pytest.mark.parametrize(("n", "k_95", "k_999"), [(12_832, 6_510, 6_592), (20, 14, 17)])
def test_marks_flip_exactly_at_k(n: int, k_95: int, k_999: int) -> None:
    # n = 20: 10 + 1.6449 * 2.2361 = 13.68 -> 14; 10 + 3.0902 * 2.2361 = 16.91 -> 17
    thresholds = significance_thresholds(n)
    assert (thresholds.k_95, thresholds.k_999) == (k_95, k_999)
    assert significance_mark(k_95 - 1, thresholds) == ""
    assert significance_mark(k_95, thresholds) == "*"
    assert significance_mark(k_999 - 1, thresholds) == "*"
    assert significance_mark(k_999, thresholds) == "**"


def test_unreachable_threshold_with_few_pairs() -> None:
    # n = 2: 1 + 3.0902 * 0.7071 = 3.19 -> 4 correct pairs needed out of 2
    t = significance_thresholds(2)
    assert (t.k_95, t.k_999, t.p_999) == (3, 4, None)
    assert significance_mark(2, t) == ""
    line = threshold_line(t)
    assert line is not None and "unreachable (3 of 2 pairs needed)" in line


def test_threshold_line_prints_the_paper_numbers() -> None:
    line = threshold_line(significance_thresholds(12_832))
    assert line is not None
    assert "95%: 50.73% (6,510 / 12,832, exact p 0.049" in line
    assert "99.9%: 51.37% (6,592 / 12,832, exact p 9." in line
    assert "mean 6,416, sd 56.64" in line
    assert threshold_line(significance_thresholds(0)) is None


def _summary_with(n_correct: int, n: int) -> RunRecord:
    """n one-pair prompts; the metric agrees with the human on the first n_correct."""
    pairs = [HumanPair(f"p{i}", f"a{i}", f"b{i}", "a") for i in range(n)]
    ranks = [
        RankRow(f"p{i}", item, r) for i in range(n) for item, r in ((f"a{i}", 1), (f"b{i}", 2))
    ]
    scores = [
        ScoreRow(item, "v", float(value), "ok")
        for i in range(n)
        for item, value in ((f"a{i}", i < n_correct), (f"b{i}", i >= n_correct))
    ]
    return evaluate(scores, pairs, ranks, settings=MetricSettings(bootstrap=0))


@pytest.mark.parametrize(("n_correct", "stars"), [(13, ""), (14, "*"), (16, "*"), (17, "**")])
def test_printed_table_marks_agree_with_printed_threshold(n_correct: int, stars: str) -> None:
    record = _summary_with(n_correct, 20)
    assert record.variants["v"].n_correct == n_correct
    console = Console(markup=False, record=True, width=240)
    print_summary(record, console)
    text = console.export_text()
    assert "95%: 70.00% (14 / 20" in text and "99.9%: 85.00% (17 / 20" in text
    row = next(line for line in text.splitlines() if line.lstrip("│ ").startswith("v "))
    cells = [cell.strip() for cell in row.split("│")]
    assert cells[3] == stars, row


def test_a_variant_with_fewer_pairs_gets_its_own_printed_threshold() -> None:
    """'w' failed on two items, so it is marked against k of its 18 pairs, not of the 20 the
    other variant has: that k is printed too, or its mark would disagree with the line shown.
    n = 18: 9 + 1.6449 * 2.1213 = 12.49 -> 13; 9 + 3.0902 * 2.1213 = 15.56 -> 16."""
    n = 20
    pairs = [HumanPair(f"p{i}", f"a{i}", f"b{i}", "a") for i in range(n)]
    ranks = [
        RankRow(f"p{i}", item, r) for i in range(n) for item, r in ((f"a{i}", 1), (f"b{i}", 2))
    ]
    scores = [ScoreRow(f"a{i}", "v", 1.0, "ok") for i in range(n)]
    scores += [ScoreRow(f"b{i}", "v", 0.0, "ok") for i in range(n)]
    # w: 13 of its 18 pairs right (p0-p12), then wrong; p18 and p19 failed
    scores += [ScoreRow(f"a{i}", "w", float(i < 13), "ok") for i in range(18)]
    scores += [ScoreRow(f"b{i}", "w", float(i >= 13), "ok") for i in range(18)]
    scores += [ScoreRow(f"a{i}", "w", None, "failed") for i in (18, 19)]
    record = evaluate(scores, pairs, ranks, settings=MetricSettings(bootstrap=0))
    assert (record.variants["w"].n_pairs, record.variants["w"].n_correct) == (18, 13)
    console = Console(markup=False, record=True, width=400)
    print_summary(record, console)
    text = console.export_text()
    assert "Chance thresholds for 20 pairs" in text
    own = next(line for line in text.splitlines() if line.startswith("w: "))
    assert "chance thresholds for 18 pairs" in own
    assert "95%: 72.22% (13 / 18" in own and "99.9%: 88.89% (16 / 18" in own
    row = next(line for line in text.splitlines() if line.lstrip("│ ").startswith("w "))
    assert [cell.strip() for cell in row.split("│")][3] == "*"  # 13 >= 13, as its own line says
