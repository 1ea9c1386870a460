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


def _add(
    sub: argparse._SubParsersAction, name: str, target: str, help: str
) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help, description=help)
    parser.set_defaults(func=_handler(target))
    return parser


def _add_set(
    parser: argparse.ArgumentParser, example: str = "e.g. describer.model=litellm:openai/gpt-4o"
) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="K=V",
        help=f"override a config key, {example} (repeatable)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="titjudge",
        description="Judge how well text-to-image outputs follow long prompts (TIT-Score and beyond).",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)"
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # ---- data
    data = sub.add_parser("data", help="datasets: import, synthesise, aggregate votes, rank")
    data_sub = data.add_subparsers(dest="data_command", metavar="DATA_COMMAND", required=True)

    p = _add(
        data_sub,
        "synth",
        "titjudge.data.commands:synth",
        "write a SYNTHETIC benchmark shaped like LPG-Bench (prompts, PNGs, votes, pairs, ranks)",
    )
    p.add_argument("--prompts", type=int, required=True, help="number of prompts")
    p.add_argument("--models", type=int, required=True, help="number of simulated T2I models")
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--image-size", type=int, default=256, help="PNG side length in pixels")
    p.add_argument("--annotators", type=int, default=15, help="simulated annotators per pair")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes drawing images (default: all cores for large runs); output is identical",
    )

    p = _add(
        data_sub,
        "aggregate-votes",
        "titjudge.data.commands:aggregate_votes",
        "aggregate annotator votes into human pairs (strong consensus, advantage, experts)",
    )
    p.add_argument(
        "votes",
        type=Path,
        help="votes CSV: prompt_id,item_a,item_b,votes_a,votes_b,votes_tie[,expert_1..3]",
    )
    p.add_argument("--out", type=Path, required=True, help="pairs CSV to write")
    p.add_argument(
        "--panel-size",
        metavar="N|any",
        help="annotators per row; 'any' lets each row's total set its thresholds "
        "(default: every row must count as many as the first)",
    )

    p = _add(
        data_sub,
        "rank",
        "titjudge.data.commands:rank",
        "per-prompt rankings (ties allowed) from human pair outcomes",
    )
    p.add_argument("pairs", type=Path, help="pairs CSV: prompt_id,item_a,item_b,winner")
    p.add_argument("--out", type=Path, required=True, help="ranks CSV to write")

    p = _add(
        data_sub,
        "import",
        "titjudge.data.commands:import_dir",
        "turn a folder of prompts and generated images into a manifest",
    )
    p.add_argument("dir", type=Path, help="folder holding prompts and images")
    p.add_argument("--out", type=Path, required=True, help="manifest JSONL to write")
    p.add_argument(
        "--mapping",
        type=Path,
        help="explicit mapping file (CSV/JSONL) when the layout is not detected",
    )

    # ---- metrics
    p = _add(
        sub,
        "metrics",
        "titjudge.metrics.commands:metrics",
        "agreement of variant scores with human judgments: accuracy, SRCC, KRCC, nDCG, leaderboard",
    )
    p.add_argument(
        "scores", type=Path, help="scores CSV: item_id,variant,score,status (ok|failed|fallback)"
    )
    p.add_argument(
        "--pairs", type=Path, required=True, help="human pairs CSV: prompt_id,item_a,item_b,winner"
    )
    p.add_argument(
        "--ranks",
        type=Path,
        help="human ranks CSV: prompt_id,item_id,rank (default: derived from the pairs)",
    )
    p.add_argument(
        "--manifest",
        type=Path,
        help="manifest JSONL; gives each image's T2I model for the leaderboard",
    )
    p.add_argument("--json", action="store_true", help="print the metrics as JSON (NaN as null)")
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        help="bootstrap resamples of prompts for 95%% CIs (0 = off)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resampling")
    p.add_argument(
        "--gain",
        choices=("linear", "exponential"),
        default="linear",
        help="nDCG gain: linear = n - rank, exponential = 2^(n - rank) - 1",
    )
    p.add_argument(
        "--top-k", type=int, help="nDCG@k: only the first k positions count (default: all)"
    )
    p.add_argument(
        "--round-digits",
        type=int,
        help="round scores to this many decimals before comparing (defines metric ties)",
    )

    # ---- run / score / demo
    p = _add(
        sub,
        "run",
        "titjudge.agents.commands:run",
        "describe and judge every item of a config's manifest",
    )
    p.add_argument("config", type=Path, help="run config (YAML)")
    _add_set(p)
    p.add_argument("--limit", type=int, help="only the first N manifest items")
    p.add_argument("--out", type=Path, help="run dir (default: <run.out>/<name>)")

    p = _add(
        sub,
        "score",
        "titjudge.agents.commands:score",
        "describe one image and judge it against one prompt",
    )
    p.add_argument("image", type=Path)
    p.add_argument("prompt", help="the text-to-image prompt")
    p.add_argument(
        "--config", type=Path, help="config naming describer and judges (default: Gemini 2.5 Pro)"
    )
    _add_set(p)

    p = _add(
        sub,
        "demo",
        "titjudge.agents.commands:demo",
        "end-to-end run on a small SYNTHETIC benchmark; needs no model download and no API key",
    )
    p.add_argument(
        "--out", type=Path, default=Path("titjudge-demo"), help="folder for data, cache and run"
    )
    p.add_argument("--prompts", type=int, default=20)
    p.add_argument("--models", type=int, default=6)
    p.add_argument("--seed", type=int, default=0)

    # ---- cache
    cache = sub.add_parser("cache", help="the model-call cache: stats, clear")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="CACHE_COMMAND", required=True)
    for name, help_text in (
        ("stats", "entries, size, per-model counts, hits/misses of the last run"),
        ("clear", "drop cached answers (all, or one model's)"),
    ):
        p = _add(cache_sub, name, f"titjudge.cache.commands:{name}", help_text)
        p.add_argument("--cache-dir", type=Path, default=Path(".titjudge/cache"))
        if name == "clear":
            p.add_argument("--model", help="only this model spec, e.g. litellm:openai/gpt-4o")

    # ---- ablation
    p = _add(
        sub,
        "ablation",
        "titjudge.ablation.commands:ablation",
        "the paper's Table 4 grid (VLM rows x comparer columns) plus Tables 2 and 3, in one run",
    )
    p.add_argument(
        "config",
        type=Path,
        help="ablation config (YAML): describers (rows) and comparers (columns)",
    )
    p.add_argument("--out", type=Path, help="output folder (default: <run.out>/<name>)")
    _add_set(p, "e.g. describers.gpt-4o.enabled=false")
    p.add_argument("--limit", type=int, help="only the first N manifest items")
    p.add_argument(
        "--bootstrap", type=int, help="bootstrap resamples for CIs (default: the config's)"
    )

    # ---- audit
    p = _add(
        sub,
        "audit",
        "titjudge.report.audit.commands:audit",
        "audit a run pair by pair: why each judge agreed or disagreed with humans",
    )
    p.add_argument(
        "run_dir", type=Path, metavar="RUN_DIR", help="run dir written by `titjudge run`"
    )
    p.add_argument(
        "--html", type=Path, metavar="FILE", help="write one self-contained HTML audit page"
    )
    p.add_argument("--pair", metavar="PAIR_ID", help="print one pair: '<item_a>|<item_b>'")
    p.add_argument(
        "--disagreements",
        action="store_true",
        help="print the pairs judged against the human verdict, most confident first",
    )
    p.add_argument(
        "--variant", metavar="V", help="only this variant (with --disagreements or --pair)"
    )
    p.add_argument(
        "--limit", type=int, metavar="N", help="with --disagreements: show N pairs (default 20)"
    )

    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    from titjudge.safety import RedactingFilter

    for handler in logging.getLogger().handlers:  # handler-level: third-party records pass too
        handler.addFilter(RedactingFilter())


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
        from titjudge.safety import redact, terminal_safe

        print(f"titjudge: error: {terminal_safe(redact(str(exc)))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(
            "titjudge: interrupted; finished model calls are cached, re-run to resume",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
