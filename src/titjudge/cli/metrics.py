"""`titjudge metrics SCORES --pairs PAIRS`: score variants against human judgments."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from titjudge.cli.common import command


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `metrics`."""
    p = command(
        subparsers,
        "metrics",
        metrics,
        "agreement of variant scores with human judgments: accuracy, SRCC, KRCC, nDCG, leaderboard",
    )
    p.add_argument(
        "scores",
        type=Path,
        help="scores CSV: item_id,variant,score,status (ok|failed|fallback); or a run dir, or "
        "its <run.out>/<name> folder (its latest run), to read that run's scores.csv",
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


def metrics(args: argparse.Namespace) -> int:
    """Load scores, pairs, ranks (or derive them) and the optional manifest; print metrics."""
    from titjudge.data.pairs import check_pairs_known, load_pairs, load_ranks
    from titjudge.data.ranking import rank_items
    from titjudge.data.scores import load_scores
    from titjudge.errors import DataError
    from titjudge.metrics.fallback import apply_fallback_rule
    from titjudge.metrics.summary import evaluate, to_json

    items = None
    if args.manifest is not None:
        from titjudge.data.manifest import load_manifest

        items = load_manifest(args.manifest)
    if args.scores.is_dir():
        from titjudge.report.runs import resolve_run

        args.scores = resolve_run(args.scores) / "scores.csv"
    scores = load_scores(args.scores)
    if not scores:
        raise DataError(f"{args.scores}: scores file has no rows")
    # the rule `run` applies: the manifest, when given, knows every item; else the scores do
    pairs = load_pairs(args.pairs, {item.item_id: item for item in items} if items else None)
    if items is None:
        check_pairs_known(pairs, {row.item_id for row in scores}, args.pairs, str(args.scores))
    ranks = load_ranks(args.ranks) if args.ranks is not None else rank_items(pairs)
    options = {
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "gain": args.gain,
        "top_k": args.top_k,
        "round_digits": args.round_digits,
    }
    # fallback rows (another judge's scale) are kept out of rank metrics, as in a run
    summary = apply_fallback_rule(
        evaluate(scores, pairs, ranks, items, **options), scores, pairs, ranks, items, **options
    )
    if args.json:
        sys.stdout.write(to_json(summary) + "\n")
        return 0
    from rich.console import Console

    from titjudge.metrics.render import print_summary

    print_summary(summary, Console(markup=False))
    return 0
