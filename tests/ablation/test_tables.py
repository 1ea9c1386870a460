"""Table writers and the heatmap on a hand-made grid: marks, escaping, omissions."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from titjudge.ablation.grid import grid_notes
from titjudge.ablation.heatmap import colour_span, write_heatmap
from titjudge.ablation.tables import mark_best, table2, table4
from titjudge.ablation.writers import latex_escape, to_csv, to_latex, to_markdown
from titjudge.records import AblationResult, CellResult, ColumnInfo, RowResult
from titjudge.records.run_record import VariantRecord


def cell(
    accuracy: float | None,
    n_failed: int = 0,
    n_items: int = 10,
    error: str | None = None,
    srcc: float = 0.5,
    n_pairs: int = 100,
    n_prompts: int = 10,
) -> CellResult:
    metrics = {
        "pairwise_accuracy": accuracy,
        "n_pairs": n_pairs if accuracy is not None else 0,
        "metric_tie_rate": 0.0,
        "srcc": srcc,
        "krcc": srcc / 2,
        "n_prompts": n_prompts,
        "ndcg": 0.9,
        "n_prompts_ndcg": n_prompts,
    }
    return CellResult(
        n_items=n_items,
        n_failed=n_failed,
        metrics=VariantRecord.model_validate(metrics),
        error=error,
    )


def hand_made(tmp_path: Path) -> AblationResult:
    columns = [
        ColumnInfo("lmm", "LMM Score", "lmm", None),
        ColumnInfo("self", "Self-Eval", "self_eval", None),
        ColumnInfo("tit", "TIT-Score_v2 & co", "embedding", "embed:x"),
        ColumnInfo("dead", "Dead", "llm", "litellm:openai/dead"),
    ]
    dead = cell(None, n_failed=10, error="gave up after 1 attempts: connection refused")
    rows = [
        RowResult(
            "gemini",
            "Gemini 2.5 Pro",
            "litellm:gemini/gemini-2.5-pro",
            tmp_path / "rows/gemini",
            cells={
                "lmm": cell(0.0410),
                "self": cell(0.6120, n_failed=3),
                "tit": cell(0.7530),
                "dead": dead,
            },
        ),
        RowResult(
            "qwen",
            "Qwen2.5-VL_7B",
            "hf:q",
            tmp_path / "rows/qwen",
            cells={
                "lmm": cell(0.42889),
                "self": cell(0.70001, srcc=0.8),
                "tit": cell(0.69999, srcc=0.7),
                "dead": dead,
            },
        ),
        RowResult(
            "one",
            "Only-one",
            "hf:o",
            tmp_path / "rows/one",
            cells={
                "lmm": cell(0.55),
                "self": cell(None, n_failed=10, error="no JSON"),
                "tit": cell(None),
                "dead": dead,
            },
        ),
        RowResult("boom", "Crashed", "hf:b", tmp_path / "rows/boom", error="model folder missing"),
    ]
    result = AblationResult("hand", tmp_path, columns, [], rows)
    result.notes = grid_notes(result)
    return result


def test_mark_best_bolds_ties_and_underlines_the_next_value():
    assert mark_best([70.0, 42.89, 70.0, None], 2) == ["best", "second", "best", None]
    assert mark_best([55.0, None], 2) == [None, None]  # nothing to compare
    assert mark_best([60.0, 60.0], 2) == ["best", "best"]
    # values equal as displayed are marked alike
    assert mark_best([70.001, 69.999, 10.0], 2) == ["best", "best", "second"]


def test_latex_marks_best_and_second_per_row_and_escapes(tmp_path):
    latex = to_latex(table4(hand_made(tmp_path)))
    lines = latex.splitlines()
    assert r"    VLM & LMM Score & Self-Eval & TIT-Score\_v2 \& co \\" in lines  # 'Dead' omitted
    assert (
        r"    Gemini 2.5 Pro & 4.10{\footnotesize (n=100)} & "
        r"\underline{61.20}{\footnotesize (n=100, 3 failed)} & \textbf{75.30}{\footnotesize (n=100)} \\"
        in lines
    )
    assert (
        r"    Qwen2.5-VL\_7B & \underline{42.89}{\footnotesize (n=100)} & "
        r"\textbf{70.00}{\footnotesize (n=100)} & \textbf{70.00}{\footnotesize (n=100)} \\"
    ) in lines
    assert r"    Only-one & 55.00{\footnotesize (n=100)} & -- & -- \\" in lines
    assert not any("Crashed" in line for line in lines if not line.startswith("%"))
    assert r"\begin{tabular}{lrrr}" in latex and r"\caption{Pairwise accuracy (\%)" in latex
    assert latex_escape("50% of a_b & {x} #1 ~ ^ \\") == (
        r"50\% of a\_b \& \{x\} \#1 \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )


def test_markdown_and_csv_hold_the_same_cells(tmp_path):
    table = table4(hand_made(tmp_path))
    markdown = to_markdown(table)
    assert (
        "| Gemini 2.5 Pro | 4.10 (n=100) | <ins>61.20</ins> (n=100, 3 failed) | **75.30** (n=100) |"
        in markdown
    )
    assert "| Only-one | 55.00 (n=100) | – | – |" in markdown
    assert to_csv(table).splitlines() == [
        "VLM,LMM Score,Self-Eval,TIT-Score_v2 & co,"
        "pairs: LMM Score,pairs: Self-Eval,pairs: TIT-Score_v2 & co,"
        "failed: LMM Score,failed: Self-Eval,failed: TIT-Score_v2 & co",
        "Gemini 2.5 Pro,4.1,61.2,75.3,100,100,100,0,3,0",
        "Qwen2.5-VL_7B,42.889,70.001,69.999,100,100,100,0,0,0",
        "Only-one,55.0,,,100,,,0,10,0",
    ]


def test_notes_explain_every_omission(tmp_path):
    notes = hand_made(tmp_path).notes
    assert "row 'Crashed' failed and is omitted: model folder missing" in notes
    assert (
        "column 'Dead' omitted: its judge produced no score in any row "
        "(Gemini 2.5 Pro: gave up after 1 attempts: connection refused)"
    ) in notes
    assert "Only-one x Self-Eval: no score (all 10 items failed: no JSON)" in notes
    assert "Only-one x TIT-Score_v2 & co: no score (no human pair has both images scored)" in notes


def test_table2_marks_each_metric_over_all_cells(tmp_path):
    table = table2(hand_made(tmp_path))
    assert table.header == [
        "VLM",
        "Comparer",
        "Acc (%)",
        "Ties (%)",
        "Pairs",
        "SRCC",
        "KRCC",
        "Prompts",
        "nDCG",
        "nDCG prompts",
        "Failed",
    ]
    assert len(table.rows) == 7  # 3 + 3 + 1 cells with a value
    srcc = {(r[0].text, r[1].text): (r[5].text, r[5].mark) for r in table.rows}
    assert srcc[("Qwen2.5-VL_7B", "Self-Eval")] == ("0.8000", "best")
    assert srcc[("Qwen2.5-VL_7B", "TIT-Score_v2 & co")] == ("0.7000", "second")
    assert srcc[("Gemini 2.5 Pro", "LMM Score")] == ("0.5000", None)
    assert all(r[3].mark is None for r in table.rows)  # the tie rate is not a score to win


@pytest.mark.slow
def test_heatmap_png_and_colour_scale(tmp_path):
    assert colour_span([4.1, 61.2]) == 50.0  # 45.9 from chance, rounded up to 5
    assert colour_span([52.0, 48.0]) == 10.0  # never narrower than 10 points
    result = hand_made(tmp_path)
    path = write_heatmap(result, tmp_path / "table4.png")
    assert path is not None
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width > image.height > 200
    empty = AblationResult("empty", tmp_path, result.columns, [], [result.rows[3]])
    assert write_heatmap(empty, tmp_path / "table4.png") is None
    assert not (tmp_path / "table4.png").exists()  # no stale picture of an older grid


@pytest.mark.slow
def test_a_heatmap_drawn_from_the_same_results_is_not_drawn_again(tmp_path, monkeypatch):
    """A cached re-run of a grid gets the same cells: its table4.png is kept as it is and
    matplotlib draws nothing; any change in what is plotted draws it again."""
    import matplotlib.figure

    result = hand_made(tmp_path)
    path = write_heatmap(result, tmp_path / "table4.png")
    assert path is not None
    first = path.read_bytes()

    def no_drawing(*args, **kwargs):
        raise AssertionError("drawn again from the same results")

    with monkeypatch.context() as patched:
        patched.setattr(matplotlib.figure, "Figure", no_drawing)
        assert write_heatmap(result, path) == path
        with pytest.raises(AssertionError, match="drawn again"):
            result.rows[0].cells[result.columns[0].name].n_failed += 1  # a new note
            write_heatmap(result, path)
    assert path.read_bytes() == first
    write_heatmap(result, path)
    assert path.read_bytes() != first  # drawn anew, with its note
    path.write_bytes(b"not a png")  # a foreign or damaged file is drawn over
    write_heatmap(result, path)
    with Image.open(path) as image:
        assert image.format == "PNG"


@pytest.mark.slow
def test_terminal_table_shows_labels_whole_and_literal_at_width_60(tmp_path):
    """Rich must neither cut a long label to 'pairw…' nor read '[bold]' in one as a style."""
    from rich.console import Console

    from titjudge.ablation.writers import to_rich

    result = hand_made(tmp_path)
    result.columns[0] = ColumnInfo("lmm", "pairwise_gemini_2_5_pro_with_fallback", "lmm", None)
    result.rows[0].label = "Gemini[bold] 2.5 Pro"
    console = Console(width=60, record=True, color_system=None)
    console.print(to_rich(table4(result)))
    text = console.export_text()
    assert "…" not in text
    squeezed = "".join(ch for ch in text if ch.isalnum() or ch in "_[]")
    assert "Gemini[bold]" in squeezed
    header = "".join(
        part.strip()
        for line in text.splitlines()
        if line.startswith("┃")
        for part in line.split("┃")[2:3]
    )
    assert "pairwise_gemini_2_5_pro_with_fallback" in header


def test_chance_legend_never_asks_for_more_than_100_percent(tmp_path):
    """On 6 pairs 99.9% needs 8 correct: the legend used to print 'at least 116.67%'."""
    from titjudge.ablation.tables import _chance_legend

    def every_cell_on(n_pairs: int) -> AblationResult:
        result = hand_made(tmp_path)
        for row in result.rows:
            for found in row.cells.values():
                if found.has_value:
                    assert found.metrics is not None
                    found.metrics.n_pairs = n_pairs
        return result

    legend = _chance_legend(every_cell_on(6))
    assert "116.67" not in legend and "no accuracy at 99.9%" in legend
    assert "at least 100.00% beats chance at 95%" in legend
    assert "at least 50.73% beats chance at 95% and at least 51.37% at 99.9%" in _chance_legend(
        every_cell_on(12_832)
    )
