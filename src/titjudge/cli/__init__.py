"""The `titjudge` command line.

Each command module here (data, metrics, run, demo, estimate, explain, runs, cache, ablation,
audit, analysis, annotate) declares its subcommands' arguments next to their handlers. Building the parser imports only argparse
and these modules; a handler imports what its command drives (config, data, metrics,
agents, rich, litellm, torch...) when it runs, so `titjudge --help` stays fast.

Exit codes: the one table of them is docs/commands.md's "Exit codes" (`records.summary.
EXIT_CODES`; the constants below repeat its numbers, as building the parser imports no
record): 0 ok, 1 failed items, 2 bad input or config, 3 `run.budget_usd` left calls unsent,
4 a model was stopped or a variant's scores came mostly from its fallback, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from titjudge.cli import (
    ablation,
    analysis,
    annotate,
    audit,
    cache,
    data,
    demo,
    estimate,
    explain,
    metrics,
    run,
    runs,
    study,
    view,
)
from titjudge.cli.common import OneLineParser
from titjudge.submodules import lazy_submodules

EXIT_OK, EXIT_FAILED_ITEMS, EXIT_BAD_INPUT, EXIT_BUDGET, EXIT_DEGRADED = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130

#: the command modules, in the order `titjudge --help` lists their commands
COMMAND_MODULES = (
    data,
    metrics,
    run,
    demo,
    estimate,
    explain,
    runs,
    cache,
    ablation,
    audit,
    analysis,
    annotate,
    view,
    study,
)


def build_parser() -> argparse.ArgumentParser:
    """The whole argument tree: global options, then each command module's subcommands."""
    parser = OneLineParser(
        prog="titjudge",
        description="Judge how well text-to-image outputs follow long prompts (TIT-Score and beyond).",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)"
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    from titjudge.safety import RedactingFilter

    for handler in logging.getLogger().handlers:  # handler-level: third-party records pass too
        # once per handler: a process that calls main() again (a notebook, a test session)
        # would otherwise redact every record once per call made so far
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def _leave(code: int) -> None:
    """End the process now, after an interrupt: an interrupted run has cancelled its calls,
    removed its staging dir and closed its cache, so nothing is left to do but what Python does
    at exit, which here is slow for nothing: joining worker threads that still load a model or
    run a batch nobody waits for (`run.loop`), and tearing down litellm's module state
    (2.6-3.7 s measured on 2 busy cores)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv`, run the chosen command and return its exit code (errors: one line, exit 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from titjudge import __version__

        print(f"titjudge {__version__}")
        return EXIT_OK
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_OK
    _configure_logging(args.verbose)

    from titjudge.errors import TitjudgeError

    try:
        return int(args.func(args))
    except TitjudgeError as exc:
        from titjudge.safety import redact, terminal_safe

        # one line, whatever the message holds (a path or a provider's text with a newline)
        said = "; ".join(part.strip() for part in str(exc).splitlines() if part.strip())
        print(f"titjudge: error: {terminal_safe(redact(said))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(
            "titjudge: interrupted; finished model calls are cached, re-run to resume",
            file=sys.stderr,
        )
        if argv is None:  # the process's own command line: leave at once (see `_leave`)
            _leave(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED


__getattr__ = lazy_submodules(__name__)
