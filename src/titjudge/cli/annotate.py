"""`titjudge annotate MANIFEST --out VOTES [--pairs PAIRS | --per-prompt K]` (the web app) and
`titjudge annotate --status VOTES` (counts and agreement in the terminal)."""

from __future__ import annotations

import argparse
from pathlib import Path

from titjudge.cli.common import app_url, arg, command, web_args, web_token

EPILOG = """\
Opens a web page where annotators compare two images of the same prompt: A / B / tie
(keys: left, right, down or 1, 2, 0; S skips, U undoes), in an order of their own with
sides randomised. Each answer is on disk before the page hears back; the same name
resumes where it stopped, after a reload or a restart. Pairs: --pairs FILE
(prompt_id,item_a,item_b), --per-prompt K (K per prompt, every image about equally
often), or by default every pair of each prompt's images. VOTES is read by
`titjudge data aggregate-votes`. Binds 127.0.0.1; any other --host requires the token
the printed URL carries.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `annotate`."""
    p = command(
        subparsers,
        "annotate",
        annotate,
        "collect pairwise human preferences in the browser (or --status VOTES)",
        arg("manifest", nargs="?", type=Path, metavar="MANIFEST", help="manifest JSONL"),
        arg("--out", type=Path, metavar="VOTES", help="votes CSV to append to (resumed)"),
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    which = p.add_mutually_exclusive_group()
    arg("--pairs", type=Path, help="pairs CSV to annotate: prompt_id,item_a,item_b").add(which)
    arg("--per-prompt", type=int, metavar="K", help="draw K pairs per prompt (balanced)").add(which)
    for argument in (
        arg("--seed", type=int, default=0, help="seed of the draw and of the orders"),
        *web_args(8765),
        arg(
            "--status",
            type=Path,
            metavar="VOTES",
            help="print each annotator's counts and the agreement on shared pairs, and exit",
        ),
        arg("--json", action="store_true", help="with --status: print it as JSON"),
    ):
        argument.add(p)


def annotate(args: argparse.Namespace) -> int:
    """Serve the annotation page, or print the status of a votes file."""
    from titjudge.errors import ConfigError

    if args.status is not None:
        if args.manifest is not None or args.out is not None:
            raise ConfigError("--status VOTES reads a votes file; it takes no MANIFEST or --out")
        return print_status(Path(args.status), args.json)
    if args.json:
        raise ConfigError("--json goes with --status VOTES")
    if args.manifest is None or args.out is None:
        raise ConfigError("annotate needs MANIFEST and --out VOTES (or --status VOTES)")
    return serve(args)


def print_status(path: Path, as_json: bool) -> int:
    from titjudge.annotate.status import status_json, status_lines, summarise
    from titjudge.data.annotations import is_annotation_file, load_annotations
    from titjudge.errors import DataError
    from titjudge.safety import terminal_safe

    if not is_annotation_file(path):
        raise DataError(f"{path}: not a votes file of `titjudge annotate` (no annotator, choice)")
    status = summarise([row for _, row in load_annotations(path)])
    if as_json:
        import json

        print(json.dumps(status_json(status), indent=2, ensure_ascii=False))
        return 0
    print(f"{path}: {sum(p.votes + p.skip for p in status.annotators)} answers")
    for line in status_lines(status):
        print(terminal_safe(line))
    return 0


def serve(args: argparse.Namespace) -> int:
    import asyncio

    from titjudge.annotate.session import Session
    from titjudge.data.manifest import check_images, load_manifest
    from titjudge.data.pair_draw import draw_pairs, load_pairs_to_judge
    from titjudge.errors import DataError, MissingDependencyError, install_hint

    token = web_token(args.host, args.port)
    try:
        from titjudge.annotate.server import serve as run_server
    except ImportError as exc:
        raise MissingDependencyError(
            f"titjudge annotate needs aiohttp ({exc}); install it with {install_hint('annotate')}"
        ) from None
    items = load_manifest(Path(args.manifest))
    by_id = {item.item_id: item for item in items}
    if args.pairs is not None:
        pairs = load_pairs_to_judge(Path(args.pairs), by_id)
    else:
        pairs = draw_pairs(items, args.per_prompt, args.seed)
    used = {i for p in pairs for i in (p.item_a, p.item_b)}
    problems = check_images(item for item in items if item.item_id in used)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DataError(f"{len(problems)} image(s) cannot be shown: {problems[0]}{more}")
    session = Session(items, pairs, Path(args.out), seed=args.seed)
    prompts = len({p.prompt_id for p in pairs})

    def ready(port: int) -> None:
        print(
            f"annotating {len(pairs)} pairs ({prompts} prompts, {len(used)} images) into "
            f"{args.out}; {len(session.rows)} answers already there"
        )
        if session.foreign:
            print(
                f"note: {session.foreign} answers in {args.out} are for pairs not in this session"
            )
        print(f"open   {app_url(args.host, port, token)}", flush=True)
        print(f"status {app_url(args.host, port, token, '/status')}   (Ctrl-C stops)", flush=True)

    try:
        asyncio.run(run_server(session, args.host, args.port, token, ready))
    except KeyboardInterrupt:
        print(f"stopped; {len(session.rows)} answers in {args.out}")
    return 0
