"""Terminal views of the audit: one pair (`--pair`), the most confident mistakes
(`--disagreements`), one item (`--item`) and, for a run without human pairs, its items,
the same facts as the HTML page, laid out for 100 columns.

Model text is untrusted: it is printed as `rich.text.Text` (never parsed as markup) and
control characters (terminal escape sequences, bidi overrides) are shown as `\\x1b`-style
escapes, so a rationale can neither style the output nor drive the terminal.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from titjudge.records.item_line import ItemLine
from titjudge.records.pairs import PairVerdict
from titjudge.records.percent import percent
from titjudge.records.provenance import provenance_lines
from titjudge.report.audit.data import (
    AuditData,
    AuditItem,
    AuditPair,
    Outcome,
    describer_error,
    ok_scores,
    position_line,
    provenance_line,
)
from titjudge.safety import terminal_safe

OUTCOME_STYLE: dict[Outcome, str] = {
    "agree": "green",
    "disagree": "bold red",
    "metric_tie": "yellow",
    "failed": "magenta",
    "human_tie": "dim",
}
OUTCOME_LABEL: dict[Outcome, str] = {
    "agree": "agree",
    "disagree": "disagree",
    "metric_tie": "metric tie",
    "failed": "failed",
    "human_tie": "human tie",
}
WINNER_LABEL = {"a": "A better", "b": "B better", "tie": "tie"}
#: characters of a text shown in list mode before it is cut (full text: `--pair`)
CLIP = 300


def safe(value: object) -> Text:
    """Untrusted text as a rich Text: no markup, control characters made visible."""
    return Text(terminal_safe(value))


def clip(value: str, limit: int | None) -> str:
    if limit is None or len(value) <= limit:
        return value
    return value[:limit].rstrip() + f"… [{len(value) - limit} more characters]"


def fmt_score(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def fmt_margin(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3g}"


def print_audit_summary(data: AuditData, console: Console, limit: int) -> None:
    """The audit's one summary: with human pairs, per variant its accuracy and their outcomes
    (`_print_pairs_summary`); without, its items (`_print_items_summary`, the first `limit`)."""
    if data.pairs:
        _print_pairs_summary(data, console)
    else:
        _print_items_summary(data, console, limit)


def _print_pairs_summary(data: AuditData, console: Console) -> None:
    """Per variant: accuracy and CI, metric-tie rate, outcome counts, failures, cost."""
    table = Table(
        title=f"audit of run {data.name}: {len(data.pairs)} human pairs", title_justify="left"
    )
    for column in (
        "variant",
        "accuracy",
        "95% CI",
        "ties",
        "agree",
        "disagree",
        "m.tie",
        "failed",
        "fail/fallb.",
        "cost",
    ):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for name in data.variants:
        s = data.summaries[name]
        ci = f"{percent(s.ci[0])}–{percent(s.ci[1])}" if s.ci else "—"
        table.add_row(
            safe(name),
            percent(s.pairwise_accuracy),
            ci,
            percent(s.metric_tie_rate),
            str(s.counts["agree"]),
            str(s.counts["disagree"]),
            str(s.counts["metric_tie"]),
            str(s.counts["failed"]),
            f"{s.n_failed}/{s.fallback_text()}",
            "—" if s.cost is None else f"${s.cost:.4f}",
        )
    console.print(table)
    print_origins(data, console)
    if data.n_pairs_outside:
        console.print(
            f"{data.n_pairs_outside} human pairs left out: their images are not in this run",
            highlight=False,
        )
    print_provenance(data, console)
    print_answering_models(data, console)


def print_origins(data: AuditData, console: Console) -> None:
    """Per variant whose scores came from its fallback or whose model was stopped, one line
    saying so, in yellow (`VariantOrigin.note`)."""
    for name in data.variants:
        note = data.summaries[name].origin_note()
        if note is not None:
            console.print(safe(note), style="yellow")


def print_provenance(data: AuditData, console: Console) -> None:
    """Per variant the model asked for and the models that answered, the template and its
    sha256, thinking and sampling; a pairwise judge's position bias."""
    for name in data.variants:
        console.print(safe(provenance_line(name, data)), style="dim")
        position = data.summaries[name].position
        if position:
            console.print(safe(position_line(name, position)))


def print_answering_models(data: AuditData, console: Console) -> None:
    """The run's models whose replies came from another model than configured, from several,
    or under a snapshot's name (`models.calls.provenance`; yellow: not the configured model)."""
    for line, warning in provenance_lines(data.answered_by):
        console.print(safe(line), style="yellow" if warning else "")


def _labelled(
    console: Console, label: str, body: str | None, limit: int | None, style: str = ""
) -> None:
    line = Text(f"{label}: ", style="bold")
    line.append_text(safe(clip(body, limit)) if body else Text("(none)", style="dim"))
    if style:
        line.stylize(style, len(label) + 2)
    console.print(line)


def _result_lines(console: Console, side: str, result: ItemLine | None, full: bool) -> None:
    if result is None:
        console.print(Text(f"  {side}: not in this run", style="magenta"))
        return
    limit = None if full else CLIP
    head = f"  {side} [{result.status}]" + (
        f" cost ${result.cost:.4f}" if result.cost is not None else ""
    )
    _labelled(console, head + " rationale", result.rationale, limit)
    if result.error:
        _labelled(console, f"  {side} error", result.error, limit, "red")
    if result.answered_by:
        _labelled(console, f"  {side} answered by", ", ".join(result.answered_by), None, "dim")
    for key, value in result.details.items():
        shown = "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        _labelled(console, f"  {side} {key}", shown, limit)
    if full and result.raw:
        _labelled(console, f"  {side} raw output", result.raw, None, "dim")


def _description(console: Console, label: str, line: ItemLine | None, limit: int | None) -> None:
    """The line's description, or why the describer failed (red) when it has none."""
    failed = describer_error(line) if line is not None and line.description is None else None
    if failed:
        _labelled(console, label, f"describer failed: {failed}", limit, "red")
    else:
        _labelled(console, label, line.description if line else None, limit)


def _descriptions(
    console: Console, data: AuditData, audit_pair: AuditPair, variants: list[str], full: bool
) -> None:
    limit = None if full else CLIP
    for side, item_id in (("A", audit_pair.pair.item_a), ("B", audit_pair.pair.item_b)):
        results = data.items[item_id].results
        texts = {results[v].description for v in variants if v in results}
        for variant in variants if len(texts) > 1 else variants[:1]:
            result = results.get(variant)
            label = f"description {side}" + (f" ({variant})" if len(texts) > 1 else "")
            _description(console, label, result, limit)


def print_pair(
    data: AuditData,
    audit_pair: AuditPair,
    console: Console,
    *,
    variants: list[str] | None = None,
    full: bool = True,
    rank: int | None = None,
) -> None:
    """Every fact about one pair; `full=False` clips long texts and skips raw outputs."""
    pair = audit_pair.pair
    shown = variants or data.variants
    title = Text(f"#{rank} " if rank is not None else "")
    title.append_text(safe(f"pair {audit_pair.pair_id}"))
    console.rule(title, style="cyan")
    for side, item_id, won in (
        ("A", pair.item_a, pair.winner == "a"),
        ("B", pair.item_b, pair.winner == "b"),
    ):
        item = data.items[item_id]
        line = Text(f"{side}  ", style="bold")
        line.append_text(safe(f"{item.item_id} · {item.t2i_model}"))
        if won:
            line.append("  ← preferred by humans", style="green")
        console.print(line)
        path = Text("   image: ", style="dim")
        path.append_text(safe(item.image or "(none)"))
        console.print(path, style="dim")
    verdict = Text("human verdict: ", style="bold")
    verdict.append(WINNER_LABEL[pair.winner])
    verdict.append_text(safe(f"   prompt {pair.prompt_id}"))
    console.print(verdict)
    prompt = data.prompts.get(pair.prompt_id)
    _labelled(
        console,
        f"prompt ({len(prompt.split()) if prompt else 0} words)",
        prompt,
        None if full else CLIP,
    )
    table = Table(show_edge=False, pad_edge=False)
    for column in ("variant", "score A", "score B", "margin", "verdict", "status A/B"):
        table.add_column(column, justify="left" if column in ("variant", "verdict") else "right")
    for name in shown:
        v = audit_pair.verdicts[name]
        ra, rb = (
            data.items[pair.item_a].results.get(name),
            data.items[pair.item_b].results.get(name),
        )
        status = f"{ra.status if ra else 'absent'}/{rb.status if rb else 'absent'}"
        table.add_row(
            safe(name),
            fmt_score(v.score_a),
            fmt_score(v.score_b),
            fmt_margin(v.margin),
            Text(OUTCOME_LABEL[v.outcome], style=OUTCOME_STYLE[v.outcome]),
            status,
        )
    console.print(table)
    _descriptions(console, data, audit_pair, shown, full)
    for name in shown:
        v = audit_pair.verdicts[name]
        head = Text("── ", style="dim")
        head.append_text(safe(name))
        head.append(f": {OUTCOME_LABEL[v.outcome]}", style=OUTCOME_STYLE[v.outcome])
        console.print(head)
        if v.judged is not None:
            _judged_lines(console, v.judged, full)
            continue
        _result_lines(console, "A", data.items[pair.item_a].results.get(name), full)
        _result_lines(console, "B", data.items[pair.item_b].results.get(name), full)


def _judged_lines(console: Console, judged: PairVerdict, full: bool) -> None:
    """A pairwise judge's verdict: each order's choice and rationale, whether they agreed."""
    limit = None if full else CLIP
    agreed = judged.orders_agree
    _labelled(
        console,
        "  verdict",
        f"{judged.verdict or 'none (an order failed)'}; the orders "
        + ("agreed" if agreed else "disagreed" if agreed is False else "could not be compared"),
        None,
    )
    for number, order in enumerate(judged.orders, start=1):
        side = "A" if order.first == judged.item_a else "B"
        label = f"  order {number} ({side} first shown)"
        _labelled(console, label + " chose", order.choice or f"failed: {order.error}", None)
        _labelled(console, label + " rationale", order.rationale, limit)
        if order.answered_by:
            _labelled(console, label + " answered by", ", ".join(order.answered_by), None, "dim")


def print_disagreements(
    data: AuditData, found: list[AuditPair], total: int, console: Console, variant: str | None
) -> None:
    """The most confident mistakes, clipped; each names the `--pair` id for the full texts."""
    scope = (
        f"variant {variant}"
        if variant
        else (
            f"variant {data.variants[0]}"
            if len(data.variants) == 1
            else "any variant (margins / score sd)"
        )
    )
    console.print(
        Text(
            f"{total} disagreements with humans for {scope}; most confident first, "
            f"showing {len(found)}",
            style="bold",
        )
    )
    for rank, audit_pair in enumerate(found, start=1):
        shown = (
            [variant]
            if variant
            else [n for n in data.variants if audit_pair.verdicts[n].outcome == "disagree"]
        )
        print_pair(data, audit_pair, console, variants=shown, full=False, rank=rank)
    if found:
        console.print(
            Text("full texts and raw outputs: titjudge audit RUN_DIR --pair 'ID'", style="dim")
        )


# --------------------------------------------------------------------------- items (no pairs)


def _print_items_summary(data: AuditData, console: Console, limit: int) -> None:
    """A run without human pairs: per variant its statuses and mean score, then the first
    `limit` items with each variant's score; `--item ID` shows one item whole."""
    table = Table(
        title=f"audit of run {data.name}: {len(data.items)} items, no human pairs",
        title_justify="left",
    )
    for column in ("variant", "ok", "fallback", "failed", "mean score (ok)", "cost"):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for name in data.variants:
        s = data.summaries[name]
        scores = ok_scores(data, name)
        table.add_row(
            safe(name),
            str(len(scores)),
            s.fallback_text(),
            str(s.n_failed),
            fmt_score(sum(scores) / len(scores) if scores else None),
            "—" if s.cost is None else f"${s.cost:.4f}",
        )
    console.print(table)
    print_origins(data, console)
    items = Table(title=f"items (first {min(limit, len(data.items))})", title_justify="left")
    for column in ("item", "T2I model", "prompt", *data.variants):
        items.add_column(safe(column), overflow="fold")
    for item in list(data.items.values())[:limit]:
        cells = []
        for name in data.variants:
            result = item.results.get(name)
            score = fmt_score(result.score) if result is not None else "absent"
            status = result.status if result is not None and result.status != "ok" else ""
            cells.append(f"{score} {status}".strip())
        items.add_row(safe(item.item_id), safe(item.t2i_model), safe(item.prompt_id), *cells)
    console.print(items)
    print_answering_models(data, console)


def print_item(data: AuditData, item: AuditItem, console: Console) -> None:
    """One image whole: its model, prompt, description and every variant's score and rationale."""
    console.rule(safe(f"item {item.item_id}"), style="cyan")
    line = Text("model: ", style="bold")
    line.append_text(safe(f"{item.t2i_model}   prompt {item.prompt_id}"))
    console.print(line)
    path = Text("image: ", style="dim")
    path.append_text(safe(item.image or "(none)"))
    console.print(path)
    prompt = data.prompts.get(item.prompt_id)
    _labelled(console, f"prompt ({len(prompt.split()) if prompt else 0} words)", prompt, None)
    descriptions = {r.description for r in item.results.values()}
    for name in data.variants if len(descriptions) > 1 else data.variants[:1]:
        result = item.results.get(name)
        label = "description" + (f" ({name})" if len(descriptions) > 1 else "")
        _description(console, label, result, None)
    for name in data.variants:
        result = item.results.get(name)
        head = Text("── ", style="dim")
        head.append_text(safe(name))
        if result is not None and result.score is not None and result.status != "failed":
            head.append(f": score {fmt_score(result.score)}")
        console.print(head)
        _result_lines(console, "", result, True)
