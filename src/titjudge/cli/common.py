"""Pieces every command module of the CLI shares: declaring a command, `--set`, the console.

Nothing here imports a heavy library at module level; `wide_console()` loads rich when a
handler asks for it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

Handler = Callable[[argparse.Namespace], int]


def command(
    subparsers: argparse._SubParsersAction, name: str, handler: Handler, help: str
) -> argparse.ArgumentParser:
    """Add subcommand `name` whose handler is `handler`; its help doubles as its description."""
    parser = subparsers.add_parser(name, help=help, description=help)
    parser.set_defaults(func=handler)
    return parser


def add_set(
    parser: argparse.ArgumentParser, example: str = "e.g. describer.model=litellm:openai/gpt-4o"
) -> None:
    """The repeatable `--set K=V` config override."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="K=V",
        help=f"override a config key, {example} (repeatable)",
    )


def wide_console(**options: Any) -> Console:
    """A rich console at least 100 columns wide, so tables do not wrap in narrow terminals."""
    from rich.console import Console

    return Console(width=max(100, Console().width), **options)
