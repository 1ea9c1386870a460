"""The ablation's tables (the paper's Tables 4, 2 and 3) as Markdown, CSV, LaTeX and rich.

A `Table` is built once from an `AblationResult` and written four ways, so the file a
paper includes, the CSV a notebook reads and the terminal table never disagree. As in
the paper, the best value is bold and the second underlined; marks compare the values
as displayed, so two cells that print the same are marked the same.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from titjudge.files import atomic_write

if TYPE_CHECKING:
    from rich.table import Table as RichTable

    from titjudge.records import AblationResult, CellResult

Mark = Literal["best", "second"]
MISSING = "–"  # en dash: a cell with no value (written '--' in LaTeX, empty in CSV)
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "–": "--",
    "×": r"$\times$",
}


@dataclass(frozen=True)
class Cell:
    """Displayed `text` (unescaped), the number behind it, a best/second mark and a suffix
    (e.g. ' (3 failed)') that stays outside the mark."""

    text: str
    value: float | None = None
    mark: Mark | None = None
    suffix: str = ""


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[Cell]]
    label_columns: int  # leading text columns (left-aligned); the rest are numbers
    legend: str
    key: str  # LaTeX label suffix: tab:<key>
    csv_header: list[str]
    csv_rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)


def mark_best(values: Sequence[float | None], digits: int) -> list[Mark | None]:
    """'best' for the highest displayed value(s), 'second' for the next distinct one.

    Needs at least two values; with one there is nothing to compare.
    """
    shown = [None if v is None else float(f"{v:.{digits}f}") for v in values]
    present = [v for v in shown if v is not None]
    if len(present) < 2:
        return [None] * len(values)
    ranked = sorted(set(present), reverse=True)
    best, second = ranked[0], ranked[1] if len(ranked) > 1 else None
    return [
        "best" if v == best else "second" if v is not None and v == second else None for v in shown
    ]


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _number(value: float | None, digits: int) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else 100.0 * fraction


def _failed_suffix(cell: CellResult) -> str:
    return f" ({cell.n_failed} failed)" if cell.n_failed else ""


def _chance_legend(result: AblationResult) -> str:
    thresholds = result.thresholds
    if not thresholds or thresholds.get("acc_95") is None:
        return "50% is chance."
    n = thresholds["n_pairs"]
    return (
        f"50% is chance; on {n:,} human pairs, {_level_reach(thresholds, '95')} beats chance "
        f"at 95% and {_level_reach(thresholds, '999')} at 99.9% (one-sided)."
    )


def _level_reach(thresholds: dict[str, Any], level: str) -> str:
    """'at least 51.37%', or 'no accuracy' when the level needs more correct pairs than exist
    (a handful of pairs can never beat chance at 99.9%)."""
    if thresholds[f"k_{level}"] > thresholds["n_pairs"]:
        return "no accuracy"
    return f"at least {100 * thresholds[f'acc_{level}']:.2f}%"


def table4(result: AblationResult) -> Table:
    """Pairwise accuracy (%) per VLM (rows) and comparer (columns); marks per row."""
    columns = result.shown_columns
    rows, csv_rows = [], []
    for row in result.shown_rows:
        cells = [row.cells[c.name] for c in columns]
        values = [_percent(cell.accuracy) for cell in cells]
        marks = mark_best(values, 2)
        rows.append(
            [Cell(row.label)]
            + [
                Cell(_number(v, 2), v, m, _failed_suffix(cell) if v is not None else "")
                for v, m, cell in zip(values, marks, cells, strict=True)
            ]
        )
        csv_rows.append(
            [
                row.label,
                *(None if v is None else round(v, 4) for v in values),
                *(cell.n_failed for cell in cells),
            ]
        )
    return Table(
        title="Table 4: pairwise accuracy (%) of each VLM backbone with each comparer",
        header=["VLM", *(c.label for c in columns)],
        rows=rows,
        label_columns=1,
        legend=(
            f"Pairwise accuracy (%) against human preferences. {_chance_legend(result)} "
            "Bold: best in the row; underlined: second best."
        ),
        key="ablation-accuracy",
        csv_header=["VLM", *(c.label for c in columns), *(f"failed: {c.label}" for c in columns)],
        csv_rows=csv_rows,
        notes=list(result.notes),
    )


#: Table 2 metrics: (heading, metrics key, scale, digits, marked)
_TABLE2 = (
    ("Acc (%)", "pairwise_accuracy", 100.0, 2, True),
    ("Ties (%)", "metric_tie_rate", 100.0, 1, False),
    ("SRCC", "srcc", 1.0, 4, True),
    ("KRCC", "krcc", 1.0, 4, True),
    ("nDCG", "ndcg", 1.0, 4, True),
)


def _metric(cell: CellResult, key: str, scale: float) -> float | None:
    value = (cell.metrics or {}).get(key)
    return None if value is None else scale * value


def table2(result: AblationResult) -> Table:
    """Acc, metric ties, SRCC, KRCC and nDCG per (VLM, comparer); marks per metric over all cells."""
    entries = [
        (row, column, row.cells[column.name])
        for row in result.shown_rows
        for column in result.shown_columns
        if row.cells[column.name].has_value
    ]
    values = [
        [_metric(cell, key, scale) for _, key, scale, _, _ in _TABLE2] for _, _, cell in entries
    ]
    by_metric = [
        mark_best([v[i] for v in values], digits) if marked else [None] * len(values)
        for i, (_, _, _, digits, marked) in enumerate(_TABLE2)
    ]
    rows, csv_rows = [], []
    for index, (row, column, cell) in enumerate(entries):
        metric_cells = [
            Cell(_number(values[index][i], digits), values[index][i], by_metric[i][index])
            for i, (_, _, _, digits, _) in enumerate(_TABLE2)
        ]
        rows.append(
            [
                Cell(row.label),
                Cell(column.label),
                *metric_cells,
                Cell(str(cell.n_failed), cell.n_failed),
            ]
        )
        csv_rows.append(
            [
                row.label,
                column.label,
                *(None if v is None else round(v, 6) for v in values[index]),
                cell.n_failed,
            ]
        )
    gain = (
        next((r.metrics.get("settings", {}).get("gain") for r in result.rows if r.metrics), None)
        or "linear"
    )
    return Table(
        title="Table 2: agreement with humans per VLM and comparer",
        header=["VLM", "Comparer", *(spec[0] for spec in _TABLE2), "Failed"],
        rows=rows,
        label_columns=2,
        legend=(
            "Pairwise accuracy, metric-tie rate, and per-prompt SRCC, KRCC and nDCG "
            f"({gain} gain) averaged over prompts. Bold: best in the column; underlined: second best."
        ),
        key="ablation-agreement",
        csv_header=[
            "VLM",
            "Comparer",
            "accuracy_pct",
            "metric_tie_pct",
            "srcc",
            "krcc",
            "ndcg",
            "n_failed",
        ],
        csv_rows=csv_rows,
        notes=list(result.notes),
    )


def leaderboard(result: AblationResult) -> Table:
    """Average rank of each T2I model by humans and by each (VLM, comparer), with the SRCC
    between each model ranking and the human one (the paper's Table 3)."""
    models = result.leaderboard_models
    human = next(
        (r.metrics["leaderboard"]["human"] for r in result.rows if r.metrics.get("leaderboard")),
        None,
    )
    rankers: list[tuple[str, dict[str, Any], float | None]] = []
    for row in result.shown_rows:
        board = row.metrics.get("leaderboard") or {}
        for column in result.shown_columns:
            entry = board.get("variants", {}).get(column.name)
            if entry is not None and row.cells[column.name].has_value:
                rankers.append((f"{row.label} / {column.label}", entry["models"], entry["srcc"]))
    marks = mark_best([srcc for _, _, srcc in rankers], 4)
    rows, csv_rows = [], []

    def add(name: str, standings: dict[str, Any], srcc_cell: Cell) -> None:
        averages = [standings.get(m, {}).get("average_rank") for m in models]
        rows.append([Cell(name), *(Cell(_number(a, 2), a) for a in averages), srcc_cell])
        csv_rows.append(
            [
                name,
                *(None if a is None else round(a, 6) for a in averages),
                None if srcc_cell.value is None else round(srcc_cell.value, 6),
            ]
        )

    if human is not None:
        add("Human", human, Cell(""))
    for (name, standings, srcc), mark in zip(rankers, marks, strict=True):
        add(name, standings, Cell(_number(srcc, 4), srcc, mark))
    return Table(
        title="Table 3: T2I model leaderboard (average rank over prompts, 1 = best)",
        header=["Ranked by", *models, "SRCC"],
        rows=rows,
        label_columns=1,
        legend=(
            "Average rank of each T2I model over prompts (1 = best), by humans and by each "
            "(VLM, comparer); SRCC: Spearman correlation of that model ranking with the human one. "
            "Bold: best SRCC; underlined: second best."
        ),
        key="ablation-leaderboard",
        csv_header=["ranked_by", *models, "srcc_vs_human"],
        csv_rows=csv_rows,
        notes=list(result.notes),
    )


# ------------------------------------------------------------------------------ writers


def to_markdown(table: Table) -> str:
    def show(cell: Cell) -> str:
        text = cell.text.replace("|", "\\|")
        if cell.mark == "best":
            text = f"**{text}**"
        elif cell.mark == "second":
            text = f"<ins>{text}</ins>"
        return text + cell.suffix.replace("|", "\\|")

    width = len(table.header)
    align = [":---"] * table.label_columns + ["---:"] * (width - table.label_columns)
    lines = [
        f"## {table.title}",
        "",
        "| " + " | ".join(h.replace("|", "\\|") for h in table.header) + " |",
        "|" + "|".join(align) + "|",
    ]
    lines += ["| " + " | ".join(show(c) for c in row) + " |" for row in table.rows]
    if not table.rows:
        lines.append("| " + " | ".join([MISSING] * width) + " |")
    lines += ["", table.legend]
    if table.notes:
        lines += ["", "Notes:", *(f"- {note}" for note in table.notes)]
    return "\n".join(lines) + "\n"


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.csv_header)
    for row in table.csv_rows:
        writer.writerow(["" if value is None else value for value in row])
    return buffer.getvalue()


def to_latex(table: Table) -> str:
    def show(cell: Cell) -> str:
        text = latex_escape(cell.text)
        if cell.mark == "best":
            text = rf"\textbf{{{text}}}"
        elif cell.mark == "second":
            text = rf"\underline{{{text}}}"
        return text + (rf"{{\footnotesize{latex_escape(cell.suffix)}}}" if cell.suffix else "")

    spec = "l" * table.label_columns + "r" * (len(table.header) - table.label_columns)
    lines = [
        f"% {table.title}. Needs \\usepackage{{booktabs}}.",
        r"\begin{table}[t]",
        r"  \centering",
        rf"  \caption{{{latex_escape(table.legend)}}}",
        rf"  \label{{tab:{table.key}}}",
        rf"  \begin{{tabular}}{{{spec}}}",
        r"    \toprule",
        "    " + " & ".join(latex_escape(h) for h in table.header) + r" \\",
        r"    \midrule",
    ]
    lines += ["    " + " & ".join(show(c) for c in row) + r" \\" for row in table.rows]
    lines += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}"]
    lines += [f"% note: {note}" for note in table.notes]
    return "\n".join(lines) + "\n"


def to_rich(table: Table) -> RichTable:
    """The table for the terminal: bold best, underlined second; title, headings and cells are
    never markup, and long labels fold onto more lines instead of being cut."""
    from rich.table import Table as RichTable
    from rich.text import Text

    shown = RichTable(title=Text(table.title), title_justify="left")
    for index, heading in enumerate(table.header):
        shown.add_column(
            Text(heading),
            justify="left" if index < table.label_columns else "right",
            overflow="fold",
        )
    styles = {"best": "bold", "second": "underline"}
    for row in table.rows:
        cells = []
        for cell in row:
            text = Text(cell.text, style=styles.get(cell.mark or "", ""))
            if cell.suffix:
                text.append(cell.suffix, style="yellow")
            cells.append(text)
        shown.add_row(*cells)
    return shown


def write_table(table: Table, out: Path, stem: str) -> list[Path]:
    """`<stem>.md`, `<stem>.csv` and `<stem>.tex` in `out`, each written atomically."""
    paths = []
    for suffix, render in ((".md", to_markdown), (".csv", to_csv), (".tex", to_latex)):
        path = out / f"{stem}{suffix}"
        atomic_write(path, render(table))
        paths.append(path)
    return paths
