"""Pieces every command module of the CLI shares: declaring a command and the arguments\nseveral take (the config, `--set`, `--out`, `--limit`, `--json`), the console.

Nothing here imports a heavy library at module level; `wide_console()` loads rich when a
handler asks for it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from rich.console import Console

    from titjudge.ablation.config import AblationConfig
    from titjudge.config.schema import RunConfig

Handler = Callable[[argparse.Namespace], int]


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose refusal is one line on stderr and exit 2, like every other
    refusal of titjudge's: `titjudge run: error: argument --progress-every: ... (see titjudge
    run --help)`, without argparse's usage block (`--help` still prints it). Its subcommands'
    parsers are of this class too (`add_subparsers` makes them of the parent's type)."""

    def error(self, message: str) -> NoReturn:
        from titjudge.safety import terminal_safe

        line = terminal_safe(" ".join(message.split()))  # the value echoed is the user's
        sys.stderr.write(f"{self.prog}: error: {line} (see {self.prog} --help)\n")
        sys.exit(2)


@dataclass(frozen=True)
class Arg:
    """One command-line argument as data (`add_argument`'s flags and options), so that the
    commands taking the same argument share one declaration of it."""

    flags: tuple[str, ...]
    options: dict[str, Any]

    def add(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        parser.add_argument(*self.flags, **self.options)


def arg(*flags: str, **options: Any) -> Arg:
    """An argument as `add_argument` would take it."""
    return Arg(flags, options)


def command(
    subparsers: argparse._SubParsersAction,
    name: str,
    handler: Handler,
    help: str,
    *args: Arg,
) -> argparse.ArgumentParser:
    """Add subcommand `name` whose handler is `handler`, with `args`; its help doubles as its
    description."""
    parser = subparsers.add_parser(name, help=help, description=help)
    parser.set_defaults(func=handler)
    for argument in args:
        argument.add(parser)
    return parser


def config_arg(help: str = "run config (YAML)") -> Arg:
    """The config file a command runs or plans."""
    return arg("config", type=Path, help=help)


def set_arg(example: str = "e.g. describer.model=litellm:openai/gpt-4o") -> Arg:
    """The repeatable `--set K=V` config override."""
    return arg(
        "--set",
        action="append",
        default=[],
        metavar="K=V",
        help=f"override a config key, {example} (repeatable)",
    )


def out_arg(what: str) -> Arg:
    """`--out` of a command that writes a run dir (`run`, `ablation`): exactly that folder."""
    return arg(
        "--out",
        type=Path,
        help=f"{what}, exactly; refused if it exists and is not empty "
        "(default: a new <run.out>/<name>/<run id>/, named in <run.out>/<name>/LATEST)",
    )


#: `--limit` of the commands that run or plan a config
LIMIT = arg("--limit", type=int, help="only the first N manifest items")


def config_args(
    help: str = "run config (YAML)",
    example: str = "e.g. describer.model=litellm:openai/gpt-4o",
    *,
    limit: bool = True,
) -> tuple[Arg, ...]:
    """What a command that runs or plans a config takes: the config, `--set K=V` and, where it
    goes over the items, `--limit N`."""
    return (config_arg(help), set_arg(example), *((LIMIT,) if limit else ()))


def json_arg(what: str, note: str = "") -> Arg:
    """`--json`: print `what` as JSON instead of tables."""
    return arg("--json", action="store_true", help=f"print {what} as JSON{note}")


def preflight(config: RunConfig | AblationConfig, source: str) -> None:
    """The preflight of the run a command is about to make or plan (`run`, `estimate`,
    `explain`: `run.preflight.preflight_run`; a grid's, `ablation` and `estimate`:
    `ablation.config.preflight_ablation`): one ConfigError naming everything that run would
    refuse (images, keys, providers, checkpoints, data files, templates), before anything is
    built, read or sent; its notes (some images missing) on stderr."""
    from titjudge.config.schema import RunConfig

    if isinstance(config, RunConfig):
        from titjudge.run.preflight import preflight_run

        notes = preflight_run(config, source)
    else:
        from titjudge.ablation.config import preflight_ablation

        notes = preflight_ablation(config, source)
    for note in notes:
        print(f"titjudge: {note}", file=sys.stderr)


#: the width tables and lines are laid out in when output goes to a pipe or a file: wide
#: enough that no table of titjudge's wraps a word, and a line is never broken (`soft_wrap`)
PIPE_WIDTH = 250


def wide_console(*, prose: bool = False, **options: Any) -> Console:
    """A rich console for tables: at least 100 columns in a terminal (narrower ones scroll
    rather than wrap words in cells); on a pipe or in a file, `PIPE_WIDTH` with no line
    broken, so `titjudge metrics RUN | less` or `> report.txt` keeps every row on one line
    (a wider `COLUMNS` widens either). `prose`: text meant to be read in lines of at most
    100 columns (the audit's rationales), wrapped there on a pipe as well."""
    from rich.console import Console

    probe = Console(**{k: v for k, v in options.items() if k == "file"})
    if probe.is_terminal or prose:
        return Console(width=max(100, probe.width), **options)
    options.setdefault("soft_wrap", True)
    return Console(width=max(PIPE_WIDTH, probe.width), **options)


def web_args(port: int) -> list[Arg]:
    """--host and --port of a command that serves a web app (`annotate`, `view`)."""
    return [
        arg("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"),
        arg("--port", type=int, default=port, help=f"port (default {port}; 0 picks one)"),
    ]


def web_token(host: str, port: int) -> str | None:
    """The token a server on `host` requires (None on loopback); a port out of range is a
    ConfigError."""
    import secrets

    from titjudge.annotate.hosts import is_loopback  # no aiohttp: decided before any import of it
    from titjudge.errors import ConfigError

    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be 0 to 65535, got {port}")
    return None if is_loopback(host) else secrets.token_urlsafe(18)


def app_url(host: str, port: int, token: str | None, path: str = "/") -> str:
    """The URL to print for a server listening on host:port (its token in the query)."""
    import socket

    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    shown = f"[{host}]" if ":" in host else host
    query = f"?token={token}" if token else ""
    return f"http://{shown}:{port}{path}{query}"
