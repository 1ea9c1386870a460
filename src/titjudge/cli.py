"""The `titjudge` command line.

This module only declares the argument tree; each handler lives next to the code it
drives and is imported when its command runs, so `titjudge --help` imports nothing
heavy (no torch, transformers or litellm).

Exit codes: 0 ok, 1 run finished with failed items (reported), 2 bad input/config.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

EXIT_OK, EXIT_FAILED_ITEMS, EXIT_BAD_INPUT = 0, 1, 2


def _handler(target: str) -> Callable[[argparse.Namespace], int]:
    """Resolve 'module:function' lazily."""
    module_name, _, func_name = target.partition(":")

    def run(args: argparse.Namespace) -> int:
        module = importlib.import_module(module_name)
        return int(getattr(module, func_name)(args) or 0)

    return run


def _add(sub: argparse._SubParsersAction, name: str, target: str, help: str) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help, description=help)
    parser.set_defaults(func=_handler(target))
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="titjudge",
        description="Judge how well text-to-image outputs follow long prompts (TIT-Score and beyond).",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # ---- data
    data = sub.add_parser("data", help="datasets: import, synthesise, aggregate votes, rank")
    data_sub = data.add_subparsers(dest="data_command", metavar="DATA_COMMAND", required=True)

    p = _add(data_sub, "synth", "titjudge.data.commands:synth",
             "write a SYNTHETIC benchmark shaped like LPG-Bench (prompts, PNGs, votes, pairs, ranks)")
    p.add_argument("--prompts", type=int, required=True, help="number of prompts")
    p.add_argument("--models", type=int, required=True, help="number of simulated T2I models")
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--image-size", type=int, default=256, help="PNG side length in pixels")
    p.add_argument("--annotators", type=int, default=15, help="simulated annotators per pair")

    p = _add(data_sub, "aggregate-votes", "titjudge.data.commands:aggregate_votes",
             "aggregate annotator votes into human pairs (strong consensus, advantage, experts)")
    p.add_argument("votes", type=Path, help="votes CSV: prompt_id,item_a,item_b,votes_a,votes_b,votes_tie[,expert_1..3]")
    p.add_argument("--out", type=Path, required=True, help="pairs CSV to write")

    p = _add(data_sub, "rank", "titjudge.data.commands:rank",
             "per-prompt rankings (ties allowed) from human pair outcomes")
    p.add_argument("pairs", type=Path, help="pairs CSV: prompt_id,item_a,item_b,winner")
    p.add_argument("--out", type=Path, required=True, help="ranks CSV to write")

    p = _add(data_sub, "import", "titjudge.data.commands:import_dir",
             "turn a folder of prompts and generated images into a manifest")
    p.add_argument("dir", type=Path, help="folder holding prompts and images")
    p.add_argument("--out", type=Path, required=True, help="manifest JSONL to write")
    p.add_argument("--mapping", type=Path, help="explicit mapping file (CSV/JSONL) when the layout is not detected")

    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def main(argv: Sequence[str] | None = None) -> int:
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
        return args.func(args)
    except TitjudgeError as exc:
        print(f"titjudge: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("titjudge: interrupted; finished model calls are cached, re-run to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
