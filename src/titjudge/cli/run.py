"""`titjudge run` and `titjudge score`: arguments and handlers, and the run's terminal report
(`print_outcome`, which `titjudge demo` prints too)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from titjudge.cli.analysis import add_breakdown
from titjudge.cli.common import (
    arg,
    command,
    config_args,
    out_arg,
    preflight,
    set_arg,
    wide_console,
)

if TYPE_CHECKING:
    from rich.console import Console

    from titjudge.records.provenance import ModelAnswers
    from titjudge.records.run_record import RunRecord
    from titjudge.records.summary import BatchModel, BudgetSummary, Failures, ModelMeans


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `run` and `score`."""
    p = command(
        subparsers,
        "run",
        run,
        "describe and judge every item of a config's manifest",
        *config_args(),
        out_arg("the run dir"),
        arg(
            "--progress-every",
            type=_seconds,
            default=None,
            metavar="SECONDS",
            help="when stderr is not a terminal (a log, CI), print a progress record every "
            "SECONDS (default 10) as well as at each phase's end",
        ),
    )
    add_breakdown(p)
    command(
        subparsers,
        "score",
        score,
        "describe one image and judge it against one prompt",
        arg("image", type=Path),
        arg("prompt", help="the text-to-image prompt"),
        arg(
            "--config",
            type=Path,
            help="config naming describer and judges (default: Gemini 2.5 Pro)",
        ),
        set_arg(),
    )


def print_outcome(record: RunRecord, console: Console) -> None:
    """A finished run's record: status counts per variant, the metrics (or, without human
    pairs, each T2I model's mean score per variant), model usage per role and the run dir;
    names and paths as plain text."""
    from titjudge.report.render import (
        add_plain_row,
        origin_lines,
        plain_table,
        print_summary,
        say,
    )

    summary, out_dir = record.summary, record.run_dir
    assert summary is not None and out_dir is not None, "a finished run's record"
    table = plain_table(f"{summary.items} items", ("variant", "ok", "fallback", "failed"))
    for variant, counts in summary.variants.items():
        add_plain_row(table, variant, str(counts.ok), str(counts.fallback), str(counts.failed))
    console.print(table)
    if record.variants:  # scored against human pairs
        print_summary(record, console)
    elif summary.model_means is not None:
        print_model_means(summary.model_means, console)
        for line in origin_lines(record):  # whose scores the means are
            say(console, line)
    for role, usage in summary.usage.items():
        say(console, f"{role}: {usage.text()}")
    print_answering_models(summary.answered_by, console)
    say(console, f"run dir: {out_dir}")
    show_failures(summary.failures, console)
    if summary.failed_items:
        console.print(
            f"{summary.failed_items} items have failed variants; reasons in "
            f"{out_dir / 'items.jsonl'} (status 'failed', field 'error')",
            style="yellow",
            markup=False,
            highlight=False,
        )
    print_budget(summary.budget, console)
    print_batch_online(summary.batch or {}, console)


def print_batch_online(batch: dict[str, BatchModel], console: Console) -> None:
    """A line per `batch: true` model whose jobs ran (what they did, as the provider counts
    it), and one per model some of whose calls were sent online all the same."""
    for model, entry in batch.items():
        jobs = entry.jobs_line()
        if jobs is not None:
            console.print(f"batch: {model}: {jobs}", soft_wrap=True, markup=False, highlight=False)
    for model, entry in batch.items():
        if entry.sent_online:
            console.print(
                f"batch: {model} sent {entry.sent_online} calls online at the list price "
                "(its batch jobs did not reach them)",
                soft_wrap=True,
                style="yellow",
                markup=False,
                highlight=False,
            )


def budget_line(budget: BudgetSummary) -> str:
    """One line: the budget, what was spent of it and, once it stopped the run, what it left
    undone (summary.json's or ablation.json's `budget`)."""
    line = f"budget: ${budget.usd:g} (run.budget_usd), spent ${budget.spent_usd:.4f}"
    if not (budget.stopped and budget.calls_not_sent):
        return line
    return (
        f"{line}; stopped: {budget.not_sent_line()}; re-run with a larger budget to finish "
        "them (answered calls are cached)"
    )


def print_budget(budget: BudgetSummary | None, console: Console) -> None:
    """The budget's line (`budget_line`), in yellow when it stopped the run; nothing unset."""
    if budget is None:
        return
    stopped = budget.stopped and budget.calls_not_sent
    console.print(
        budget_line(budget),
        style="yellow" if stopped else "",
        markup=False,
        highlight=False,
        soft_wrap=True,  # one line, whatever the width
    )


def print_failures(run_dir: Path, console: Console) -> None:
    """The run's failures grouped by role, model and reason, and the models stopped, as its
    summary.json records them (`report.failures`); in yellow, plain text on a pipe too."""
    from titjudge.report.run_summary import load_summary

    summary = load_summary(run_dir)
    show_failures(summary.failures if summary is not None else None, console)


def show_failures(failures: Failures | None, console: Console) -> None:
    """A run's failures (`RunSummary.failures`), one line each, in yellow."""
    from titjudge.safety import terminal_safe

    for line in failures.lines() if failures is not None else []:
        console.print(terminal_safe(line), style="yellow", markup=False, highlight=False)


def print_answering_models(record: dict[str, ModelAnswers], console: Console) -> None:
    """A line per model whose replies came from another model than configured (in yellow), from
    several, or under a snapshot's name (`models.calls.provenance`); names as the provider sent them."""
    from titjudge.records.provenance import provenance_lines
    from titjudge.safety import terminal_safe

    for line, warning in provenance_lines(record):
        style = "yellow" if warning else ""
        console.print(terminal_safe(line), style=style, markup=False, highlight=False)


def print_model_means(means: dict[str, ModelMeans], console: Console) -> None:
    """Per variant, the T2I models ranked by their mean score (ok rows only)."""
    from titjudge.report.render import add_plain_row, plain_table, say

    say(console, "No human pairs: T2I models ranked by mean score per variant (ok items only).")
    for variant, entry in means.items():
        table = plain_table(f"{variant}: models by mean score", ("rank", "model", "mean", "n"), 2)
        for row in entry.ranking:
            add_plain_row(table, str(row.rank), row.model, f"{row.mean:.4g}", str(row.n))
        console.print(table)
        if entry.n_failed_left_out or entry.n_fallback_left_out:
            say(
                console,
                f"{variant}: left out {entry.n_failed_left_out} failed and "
                f"{entry.n_fallback_left_out} fallback items (another judge's scale)",
            )


def print_command(console: Console, command: str) -> None:
    """A command to copy: its own line, never wrapped or styled, whatever the width."""
    console.print(command, markup=False, highlight=False, soft_wrap=True)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    """Describe and judge every manifest item of the config; exit with the run's code
    (`RunSummary.exit_code`: the one table of them is docs/commands.md's "Exit codes"). The
    preflight runs first: a model that cannot run stops it before anything is written."""
    from titjudge.config.load import load_config

    config = load_config(args.config, args.set)
    from titjudge.cli.analysis import check_breakdown_args

    asked = check_breakdown_args(args)  # a bad --breakdown is refused before any model call
    preflight(config, str(args.config))
    # after the preflight: a config it stops never pays for the run's imports
    from titjudge.run.runner import ShowProgress
    from titjudge.run.runner import run as run_pipeline

    shown = ShowProgress(interval=args.progress_every) if args.progress_every else ShowProgress()
    record = run_pipeline(config, limit=args.limit, out=args.out, progress=shown)
    console = wide_console()
    print_outcome(record, console)
    if asked:
        from titjudge.cli.analysis import breakdowns, print_breakdowns
        from titjudge.errors import DataError
        from titjudge.report.analysis.run import RunData
        from titjudge.report.render import say

        try:  # the run is written: a breakdown it cannot give is a note, not a failed run
            found = breakdowns([RunData(record)], ["run"], args)
        except DataError as error:
            say(console, f"no breakdown: {error}")
        else:
            print_breakdowns(found, console, args.plot)
    assert record.summary is not None, "a finished run's record holds its summary"
    return record.summary.exit_code


def score(args: argparse.Namespace) -> int:
    """Describe one image, judge it with every configured judge and print each outcome."""
    from rich.markup import escape

    from titjudge.config.load import load_config
    from titjudge.run.score import score as score_one
    from titjudge.safety import terminal_safe

    config = load_config(args.config, args.set) if args.config else None
    result = score_one(args.image, args.prompt, config)
    console = wide_console()
    described = result.described
    console.rule("description")
    # model text and provider errors are untrusted: no markup, no terminal control
    if described.text is not None:
        console.print(terminal_safe(described.text), markup=False, highlight=False)
    elif described.status == "skipped":
        console.print("skipped: no judge reads descriptions", highlight=False)
    else:
        console.print(
            f"failed: {terminal_safe(described.error)}", markup=False, style="red", highlight=False
        )
    for outcome in result.outcomes:
        console.rule(escape(terminal_safe(f"{outcome.variant} [{outcome.status}]")), style="cyan")
        if outcome.score is not None:
            console.print(f"score: {outcome.score:g}", highlight=False)
        if outcome.rationale:
            console.print(terminal_safe(outcome.rationale), markup=False, highlight=False)
        if outcome.error:
            console.print(
                f"error: {terminal_safe(outcome.error)}", markup=False, style="red", highlight=False
            )
    if config is not None:
        sections: list[Any] = [config.describer, *config.judges]
        batched = sorted({str(s.model) for s in sections if getattr(s, "batch", False)})
        if batched:
            console.print(
                f"note: batch: true is for runs; `titjudge score` asks now: {', '.join(batched)} "
                "online at the list price (or from the cache), not as batch jobs",
                soft_wrap=True,
                style="yellow",
                markup=False,
                highlight=False,
            )
    return 1 if result.failed else 0
