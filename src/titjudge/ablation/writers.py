"""The ablation's tables written out: Markdown, CSV, LaTeX, and rich for the terminal.

Every writer renders the same `Table` (tables.py): bold for best, underlined for second, and
each cell's suffix (its pairs, its failures) outside the mark.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING

from titjudge.ablation.tables import MISSING, Cell, Table
from titjudge.files import atomic_write

if TYPE_CHECKING:
    from rich.table import Table as RichTable

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


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


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
