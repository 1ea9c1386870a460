"""`titjudge metrics SCORES --pairs PAIRS`: score variants against human judgments."""

from __future__ import annotations

import argparse
import sys

from titjudge.errors import DataError


def metrics(args: argparse.Namespace) -> int:
    """Load scores, pairs, ranks (or derive them) and the optional manifest; print metrics."""
    from titjudge.data.pairs import load_pairs, load_ranks
    from titjudge.data.ranking import rank_items
    from titjudge.data.scores import load_scores
    from titjudge.metrics.summary import evaluate, to_json

    items = None
    if args.manifest is not None:
        from titjudge.data.manifest import load_manifest

        items = load_manifest(args.manifest)
    scores = load_scores(args.scores)
    if not scores:
        raise DataError(f"{args.scores}: scores file has no rows")
    pairs = load_pairs(args.pairs, {item.item_id: item for item in items} if items else None)
    ranks = load_ranks(args.ranks) if args.ranks is not None else rank_items(pairs)
    summary = evaluate(
        scores,
        pairs,
        ranks,
        items,
        bootstrap=args.bootstrap,
        seed=args.seed,
        gain=args.gain,
        top_k=args.top_k,
        round_digits=args.round_digits,
    )
    if args.json:
        sys.stdout.write(to_json(summary) + "\n")
        return 0
    from rich.console import Console

    from titjudge.metrics.render import print_summary

    print_summary(summary, Console(markup=False))
    return 0
