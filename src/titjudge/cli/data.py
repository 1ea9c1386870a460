"""`titjudge data synth | aggregate-votes | rank | import`: arguments and handlers.

Each handler does the work, prints a short aligned summary on stdout, writes warnings
on stderr and returns an exit code. User mistakes raise DataError (exit 2).
`aggregate-votes` exits 0 even when some rows stay unresolved: the pairs it writes
are valid, and the unresolved rows (file:line) are listed as a warning.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from titjudge.cli.common import command

if TYPE_CHECKING:
    from titjudge.data.pairs import PanelSize

#: at most this many missing images / unresolved rows are listed one per line
LIST_LIMIT = 20

RANK_EPILOG = """\
method: Copeland scoring. Within each prompt an item scores wins minus losses over the
pairs it appears in (a human tie counts 0 for both); items are ordered by score, best
first, and equal scores share the average of their positions (1 = best; two items tied
for 2nd and 3rd both get 2.5).

The TIT-Score paper describes its ranking only as "inspired by merge sort"; this is not
that. Copeland needs no transitivity: a cycle a>b, b>c, c>a gives a, b and c equal scores,
so they share a rank instead of depending on the order of comparisons. Pairs absent from
the file count nothing for either item (as a tie would), so with incomplete pairs items
judged more often can reach larger scores; items in no pair are not ranked. With every
pair judged and consistent outcomes the human order is reproduced exactly.
"""

#: `data.public.sets.presets()`' names, here so that building the parser imports no preset
#: (tests/data/test_public_pickapic.py holds the two equal)
PRESET_NAMES = (
    "pickapic-v2",
    "hpdv2",
    "hpdv3",
    "imagerewarddb",
    "evalmuse",
    "genai-bench",
    "longt2ibench",
)

IMPORT_EPILOG = """\
accepted folder layouts (detected; two at once is an error):
  (A) prompt file + image folders
        DIR/prompts.jsonl | prompts.csv | prompts.json   (prompt_id, prompt)
        DIR/images/<model>/<prompt_id>.<ext>
  (B) one folder per prompt
        DIR/<prompt_id>/prompt.txt
        DIR/<prompt_id>/<model>.<ext>
  (C) prompt texts + image folders
        DIR/prompts/<prompt_id>.txt                     (one prompt per file)
        DIR/images/<model>/<prompt_id>.<ext>
  anything else: --mapping FILE, a CSV or JSONL with prompt_id, prompt, image, t2i_model
        [, item_id]; image absolute or relative to DIR

<ext>: png, jpg, jpeg, webp, bmp, gif, tif, tiff (any case). Item ids are
<prompt_id>__<model>. A prompt without an image for some model is listed as missing (a
warning, left out of the manifest); an image whose prompt id has no prompt is an error.

a public preference set (--preset NAME; --out is then a folder):
  SOURCE is a snapshot folder laid out as the Hugging Face hub serves the dataset, or
  hf:<owner>/<name>[@revision] in the local Hugging Face cache (nothing is downloaded).
  Writes DIR/manifest.jsonl, DIR/pairs.csv, DIR/images/ (one file per image, named by its
  sha256) and DIR/DATASET.md (source, revision, split, counts, what was dropped and why,
  the set's protocol). Presets: {presets}.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `data` and its four subcommands."""
    data = subparsers.add_parser("data", help="datasets: import, synthesise, aggregate votes, rank")
    data_sub = data.add_subparsers(dest="data_command", metavar="DATA_COMMAND", required=True)

    p = command(
        data_sub,
        "synth",
        synth,
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

    p = command(
        data_sub,
        "aggregate-votes",
        aggregate_votes,
        "aggregate annotator votes into human pairs (strong consensus, advantage, experts)",
    )
    p.add_argument(
        "votes",
        type=Path,
        help="votes CSV: prompt_id,item_a,item_b,votes_a,votes_b,votes_tie[,expert_1..3], or "
        "`titjudge annotate`'s prompt_id,item_a,item_b,annotator,choice,... (counted per pair)",
    )
    p.add_argument("--out", type=Path, required=True, help="pairs CSV to write")
    p.add_argument(
        "--panel-size",
        metavar="N|any",
        help="annotators per row; 'any' lets each row's total set its thresholds "
        "(default: every row must count as many as the first)",
    )

    p = command(
        data_sub,
        "rank",
        rank,
        "per-prompt rankings (ties allowed) from human pair outcomes, by Copeland scoring",
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = RANK_EPILOG
    p.add_argument("pairs", type=Path, help="pairs CSV: prompt_id,item_a,item_b,winner")
    p.add_argument("--out", type=Path, required=True, help="ranks CSV to write")

    p = command(
        data_sub,
        "import",
        import_dir,
        "turn a folder of prompts and generated images into a manifest",
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = IMPORT_EPILOG.format(presets=", ".join(PRESET_NAMES))
    p.add_argument(
        "dir",
        metavar="SOURCE",
        help="folder holding prompts and images; with --preset, a dataset snapshot or hf:<repo>",
    )
    p.add_argument(
        "--out", type=Path, required=True, help="manifest JSONL to write (with --preset: a folder)"
    )
    p.add_argument("--preset", help="a public preference set's schema and protocol (see below)")
    p.add_argument("--split", help="with --preset: the split (default: the preset's test split)")
    p.add_argument(
        "--limit", type=int, help="with --preset: a uniform sample of N valid rows (see --seed)"
    )
    p.add_argument(
        "--min-prompt-words",
        type=int,
        metavar="N",
        help="with --preset: only rows whose prompt has at least N words (long prompts)",
    )
    p.add_argument("--seed", type=int, default=0, help="with --preset --limit: the sample's seed")
    p.add_argument(
        "--strict",
        action="store_true",
        help="with --preset: refuse the first row outside the schema, naming it (default: "
        "skip it and count it in DATASET.md)",
    )
    p.add_argument(
        "--mapping",
        type=Path,
        help="explicit mapping file (CSV/JSONL) when the layout is not detected (see below)",
    )


def _summary(title: str, rows: Sequence[tuple[str, object]]) -> None:
    width = max(len(label) for label, _ in rows)
    print(title)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


def _warn_list(header: str, lines: Sequence[str]) -> None:
    print(f"warning: {header}", file=sys.stderr)
    for line in lines[:LIST_LIMIT]:
        print(f"  {line}", file=sys.stderr)
    if len(lines) > LIST_LIMIT:
        print(f"  ... and {len(lines) - LIST_LIMIT} more", file=sys.stderr)


def synth(args: argparse.Namespace) -> int:
    """`data synth`: write the synthetic benchmark."""
    from titjudge.data.synth.benchmark import synthesize

    result = synthesize(
        Path(args.out),
        args.prompts,
        args.models,
        seed=args.seed,
        image_size=args.image_size,
        annotators=args.annotators,
        workers=getattr(args, "workers", None),
    )
    agg = result.aggregation
    _summary(
        f"SYNTHETIC benchmark written to {result.out} (simulated data, not results)",
        [
            ("prompts", result.n_prompts),
            ("models", result.n_models),
            ("images", len(result.items)),
            ("vote rows", len(result.votes)),
            ("pairs", f"{len(agg.pairs)} ({agg.n_ties} ties)"),
            (
                "rules",
                f"strong {agg.strong}, advantage {agg.advantage}, expert {agg.expert}, "
                f"expert split -> tie {agg.expert_split_tie}",
            ),
            ("ranks", result.n_ranks),
            ("seed", args.seed),
            ("time", f"{result.seconds:.1f} s on {result.workers} worker(s)"),
        ],
    )
    return 0


def _panel_mode(value: str | None) -> PanelSize:
    """--panel-size: default 'same' (rows must agree), 'any' (flexible) or a number."""
    from titjudge.errors import whole_number

    if value is None:
        return "same"
    if value.strip().lower() == "any":
        return None
    return whole_number(value, "--panel-size", minimum=1, other=" or 'any'")


def aggregate_votes(args: argparse.Namespace) -> int:
    """`data aggregate-votes`: votes CSV -> pairs CSV by the LPG-Bench rules."""
    from titjudge.data.annotations import count_votes, is_annotation_file, load_annotations
    from titjudge.data.pairs import load_votes_with_lines, write_pairs
    from titjudge.data.votes import aggregate_votes as aggregate
    from titjudge.errors import DataError

    mode = _panel_mode(getattr(args, "panel_size", None))
    per_annotator = is_annotation_file(Path(args.votes))
    if per_annotator:  # `titjudge annotate`'s file: one row per annotator and pair
        counted = count_votes(load_annotations(Path(args.votes)), Path(args.votes), mode)
        located = counted.votes
    else:
        located = load_votes_with_lines(Path(args.votes), panel_size=mode)
    if not located:
        what = "no a/b/tie votes (skips are not votes)" if per_annotator else "a header but no rows"
        raise DataError(f"{args.votes}: votes file has {what}")
    votes = [vote for _, vote in located]
    panel = votes[0].total if mode == "same" else mode if isinstance(mode, int) else None
    result = aggregate(votes, panel_size=panel)
    write_pairs(result.pairs, Path(args.out))
    _summary(
        f"aggregated {len(votes)} vote rows from {args.votes} into {args.out}",
        [
            ("panel size", panel if panel is not None else "per row (flexible)"),
            ("pairs written", f"{len(result.pairs)} ({result.n_ties} ties)"),
            ("strong consensus", result.strong),
            ("significant advantage", result.advantage),
            ("expert majority", result.expert),
            ("expert split -> tie", result.expert_split_tie),
            ("unresolved (left out)", len(result.unresolved)),
            *(
                [("annotators", counted.annotators), ("skips (not votes)", counted.skips)]
                if per_annotator
                else []
            ),
        ],
    )
    if result.unresolved:
        lines = [
            f"{args.votes}:{number}: {d.vote.prompt_id} {d.vote.item_a} vs {d.vote.item_b} "
            f"(votes a/b/tie {d.vote.votes_a}/{d.vote.votes_b}/{d.vote.votes_tie})"
            for (number, _), d in zip(located, result.decisions, strict=True)
            if d.winner is None
        ]
        _warn_list(
            f"{len(lines)} pair(s) need the experts but have no expert verdicts; they were left out:",
            lines,
        )
    return 0


def rank(args: argparse.Namespace) -> int:
    """`data rank`: pairs CSV -> per-prompt ranks CSV (Copeland, shared fractional ranks)."""
    from titjudge.data.pairs import load_pairs, write_ranks
    from titjudge.data.ranking import rank_items
    from titjudge.errors import DataError

    pairs = load_pairs(Path(args.pairs))
    if not pairs:
        raise DataError(f"{args.pairs}: pairs file has a header but no rows")
    rows = rank_items(pairs)
    write_ranks(rows, Path(args.out))
    ranks_of: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        ranks_of[row.prompt_id].append(row.rank)
    prompts = len(ranks_of)
    shared = sum(len(set(ranks)) < len(ranks) for ranks in ranks_of.values())
    _summary(
        f"ranked {len(rows)} items of {prompts} prompts into {args.out}",
        [
            ("pairs read", f"{len(pairs)} ({sum(p.winner == 'tie' for p in pairs)} ties)"),
            ("prompts", prompts),
            ("items", len(rows)),
            ("prompts with shared ranks", shared),
        ],
    )
    return 0


def import_preset(args: argparse.Namespace) -> int:
    """`data import SOURCE --preset NAME --out DIR`: a public preference set -> titjudge data."""
    from titjudge.data.public.importer import ImportOptions, import_public
    from titjudge.errors import DataError

    if args.mapping:
        raise DataError("--mapping is for a folder of prompts and images, not with --preset")
    for name in ("limit", "min_prompt_words"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise DataError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    options = ImportOptions(
        split=args.split,
        limit=args.limit,
        min_prompt_words=args.min_prompt_words,
        seed=args.seed,
        strict=args.strict,
    )
    counts = import_public(args.dir, args.preset, Path(args.out), options)
    _summary(
        f"imported {args.dir} ({args.preset}) into {args.out}",
        [
            ("rows read", counts.rows),
            ("pairs", f"{counts.pairs} ({counts.ties} ties)"),
            ("items", counts.items),
            ("prompts", counts.prompts),
            ("images written", counts.images_written),
            ("images already there", counts.images_present),
            ("rows dropped", sum(counts.dropped.values())),
        ],
    )
    return 0


def import_dir(args: argparse.Namespace) -> int:
    """`data import`: folder of prompts and images -> manifest JSONL."""
    from titjudge.data.importer import import_folder
    from titjudge.data.manifest import write_manifest
    from titjudge.errors import DataError

    if args.preset is not None:
        return import_preset(args)
    given = [
        f"--{n.replace('_', '-')}"
        for n in ("split", "limit", "min_prompt_words")
        if getattr(args, n) is not None
    ]
    if given or args.strict:
        raise DataError(
            f"{', '.join(given or ['--strict'])} go with --preset (a public preference set)"
        )
    result = import_folder(Path(args.dir), Path(args.mapping) if args.mapping else None)
    if not result.items:
        raise DataError(
            f"{args.dir}: no images found for any prompt ({len(result.missing)} expected images missing)"
        )
    write_manifest(result.items, Path(args.out))
    _summary(
        f"imported {args.dir} ({result.layout} layout) into {args.out}",
        [
            ("prompts", result.n_prompts),
            ("models", result.n_models),
            ("images", result.n_images),
            ("missing images", len(result.missing)),
        ],
    )
    if result.missing:
        _warn_list(
            f"{len(result.missing)} expected image(s) not found; those items are not in the manifest:",
            result.missing,
        )
    return 0
