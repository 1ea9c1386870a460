"""`titjudge metrics SCORES --pairs PAIRS`: score variants against human judgments;
`titjudge metrics RUN_DIR`: the run's own numbers (its record, metrics.json).

A pairwise judge's accuracy comes from its verdicts, never from its win rates: a scores CSV
inside a run dir (or a run dir with `--pairs`) reads them from the run's
pairs_<judge>.jsonl; a variant the run's config names as pairwise whose verdicts file is
missing is refused in one line, rather than given another number."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from titjudge.cli.common import arg, command, json_arg, wide_console

if TYPE_CHECKING:
    from titjudge.records.run_record import RunRecord


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `metrics`."""
    command(
        subparsers,
        "metrics",
        metrics,
        "agreement of variant scores with human judgments: accuracy, SRCC, KRCC, nDCG, leaderboard",
        arg(
            "scores",
            type=Path,
            help="scores CSV: item_id,variant,score,status (ok|failed|fallback); or a run dir, "
            "or its <run.out>/<name> folder (its latest run): without --pairs, the run's own "
            "numbers (metrics.json); with --pairs, its scores.csv (and pairwise verdicts) "
            "against those pairs",
        ),
        arg(
            "--pairs",
            type=Path,
            help="human pairs CSV: prompt_id,item_a,item_b,winner (needed with a scores CSV)",
        ),
        arg(
            "--ranks",
            type=Path,
            help="human ranks CSV: prompt_id,item_id,rank (default: derived from the pairs)",
        ),
        arg(
            "--manifest",
            type=Path,
            help="manifest JSONL; gives each image's T2I model for the leaderboard",
        ),
        json_arg("the metrics", " (NaN as null)"),
        arg(
            "--bootstrap",
            type=int,
            default=1000,
            help="bootstrap resamples of prompts for 95%% CIs (0 = off)",
        ),
        arg("--seed", type=int, default=0, help="seed of the bootstrap resampling"),
        arg(
            "--gain",
            choices=("linear", "exponential"),
            default="linear",
            help="nDCG gain: linear = n - rank, exponential = 2^(n - rank) - 1",
        ),
        arg("--top-k", type=int, help="nDCG@k: only the first k positions count (default: all)"),
        arg(
            "--round-digits",
            type=int,
            help="round scores to this many decimals before comparing (defines metric ties)",
        ),
    )


def metrics(args: argparse.Namespace) -> int:
    """Load scores, pairs, ranks (or derive them) and the optional manifest; print metrics."""
    from titjudge.data.pairs import check_pairs_known, load_pairs, load_ranks
    from titjudge.data.ranking import rank_items
    from titjudge.data.scores import load_scores
    from titjudge.errors import DataError
    from titjudge.files import to_json
    from titjudge.metrics.summary import MetricSettings, metrics_record

    if args.scores.is_dir():
        from titjudge.report.runs import resolve_run

        run = resolve_run(args.scores)
        if args.pairs is None:
            return _print_record(run, args.json)
        args.scores = run / "scores.csv"
    if args.scores.parent.joinpath("files.json").is_file():  # a run's scores.csv: check the run
        from titjudge.report.run_files import verify_run

        verify_run(args.scores.parent)
    elif args.pairs is None:
        raise DataError(f"{args.scores}: --pairs PAIRS is needed to score a scores CSV")
    items = None
    if args.manifest is not None:
        from titjudge.data.manifest import load_manifest

        items = load_manifest(args.manifest)
    scores = load_scores(args.scores)
    if not scores:
        raise DataError(f"{args.scores}: scores file has no rows")
    # the rule `run` applies: the manifest, when given, knows every item; else the scores do
    pairs = load_pairs(args.pairs, {item.item_id: item for item in items} if items else None)
    if items is None:
        check_pairs_known(pairs, {row.item_id for row in scores}, args.pairs, str(args.scores))
    ranks = load_ranks(args.ranks) if args.ranks is not None else rank_items(pairs)
    # one pass: fallback rows kept out of rank metrics, pairwise variants from their verdicts
    record = metrics_record(
        scores,
        pairs,
        ranks,
        items,
        verdicts=_verdicts(args.scores, {row.variant for row in scores}),
        settings=MetricSettings(
            bootstrap=args.bootstrap,
            seed=args.seed,
            gain=args.gain,
            top_k=args.top_k,
            round_digits=args.round_digits,
        ),
    )
    if args.json:
        sys.stdout.write(to_json(_with_origins(record)) + "\n")
        return 0
    _print(record)
    return 0


def _print(record: RunRecord) -> None:
    from titjudge.report.render import print_summary

    print_summary(record, wide_console(markup=False))


def _print_record(run: Path, as_json: bool) -> int:
    """The run's own numbers, as its record holds them (read by `load_run`, which checks
    every file of the run against its files.json first), with where each variant's scores
    came from and whether its model was stopped (its summary.json's `origins`; `--json`: under
    `origins`, null where the run did not record them)."""
    from titjudge.errors import DataError
    from titjudge.files import to_json
    from titjudge.report.record import load_run

    record = load_run(run)
    if not (run / "metrics.json").is_file():
        raise DataError(
            f"{run}: the run wrote no metrics (no data.human_pairs); "
            "score its scores.csv with --pairs PAIRS"
        )
    if as_json:
        sys.stdout.write(to_json(_with_origins(record)) + "\n")
    else:
        _print(record)
    return 0


def _with_origins(record: RunRecord) -> dict[str, Any]:
    """`metrics --json`'s document: metrics.json's, and each variant's origin
    (`RunRecord.origin`: null where not known)."""
    origins = {name: record.origin(name) for name in record.variants}
    return {
        **record.metrics_json(),
        "origins": {n: o.model_dump(mode="json") if o else None for n, o in origins.items()},
    }


def _verdicts(scores: Path, variants: set[str]) -> dict[str, Any]:
    """The pairwise judges' verdicts of the run dir holding `scores` (pairs_<judge>.jsonl);
    a variant its config.yaml names as pairwise without that file is a DataError."""
    from titjudge.errors import DataError
    from titjudge.report.record import load_verdicts

    folder = scores.parent
    found: dict[str, Any] = {}
    for name in sorted(variants):
        path = folder / f"pairs_{name}.jsonl"
        if path.is_file():
            found[name] = load_verdicts(path)
    if (folder / "config.yaml").is_file():
        from titjudge.records.run_config import RunConfigFile

        for judge in RunConfigFile.read(folder).judges:
            if judge.kind != "pairwise":
                continue
            name = judge.name
            if name in variants and name not in found:
                raise DataError(
                    f"{scores}: variant {name!r} is a pairwise judge and its accuracy comes "
                    f"from its verdicts, but {folder / f'pairs_{name}.jsonl'} is missing"
                )
    return found
