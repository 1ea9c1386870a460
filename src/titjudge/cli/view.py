"""`titjudge view [RUNS] [--host H] [--port N] [--open] [--votes VOTES] [--bundle DIR]`: the
workbench, one local web app over every run and ablation grid under a folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from titjudge.cli.common import app_url, arg, command, web_args, web_token

EPILOG = """\
Every run under RUNS (a run dir, a <run.out>/<name> folder, a run.out folder, an ablation
grid; default: the --config's run.out, else ./runs) in one page: each run's numbers, models,
cost and status; two runs' config changes and paired tests; every human pair with each
run's each judge's verdict and rationale side by side, filtered (every judge wrong, judges
disagree, changed between two runs, prompt length, T2I model, judge kind, text in the
rationales); the Table 4 heatmap, accuracy by prompt length, the leaderboard and each
judge's calibration. A run in progress shows its progress as it goes. With --votes VOTES,
the pairs a filter shows go to an annotation queue (the pairs the judges part on most
first) at /annotate/, whose answers are appended to VOTES (read by `titjudge data
aggregate-votes`; the agreement updates as votes come in). It reads run dirs and never
writes them. Binds 127.0.0.1; any other --host requires the token the printed URL carries.
--bundle DIR writes the same as a folder whose index.html works from file:// instead of
serving it.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `view`."""
    p = command(
        subparsers,
        "view",
        view,
        "the workbench: every run, judge and pair in one local web app (or --bundle DIR)",
        arg("runs", nargs="?", type=Path, metavar="RUNS", help="folder of runs (default: runs)"),
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    for argument in (
        arg("--config", type=Path, help="take RUNS from this config's run.out"),
        *web_args(8767),
        arg("--open", action="store_true", help="open the page in a browser"),
        arg(
            "--votes",
            type=Path,
            metavar="VOTES",
            help="votes CSV the annotation queue appends to (resumed; as `annotate --out`)",
        ),
        arg("--bundle", type=Path, metavar="DIR", help="write a static copy to DIR and exit"),
    ):
        argument.add(p)


def runs_folder(args: argparse.Namespace) -> Path:
    """RUNS, else the config's run.out, else ./runs."""
    from titjudge.errors import ConfigError

    if args.runs is not None and args.config is not None:
        raise ConfigError("give RUNS or --config, not both")
    if args.runs is not None:
        return Path(args.runs)
    if args.config is not None:
        from titjudge.config.load import load_config

        return Path(load_config(args.config).run.out)
    return Path("runs")


def view(args: argparse.Namespace) -> int:
    """Serve the workbench, or write its bundle."""
    from titjudge.errors import ConfigError

    token = web_token(args.host, args.port)
    if args.bundle is not None and args.votes is not None:
        raise ConfigError("--votes is for the served app; a --bundle is read only")
    from titjudge.workbench.catalog import Catalog

    catalog = Catalog.find(runs_folder(args))
    if args.bundle is not None:
        from titjudge.workbench.bundle import write_bundle

        page = write_bundle(catalog, Path(args.bundle))
        print(f"wrote {page} ({len(catalog.runs)} runs): open it in a browser")
        return 0
    return serve(catalog, args, token)


def check_votes(path: Path) -> Path:
    """VOTES, read now: a votes file of another shape (or a folder) is one line at start,
    not at the first queue."""
    from titjudge.data.annotations import is_annotation_file
    from titjudge.errors import DataError

    if path.is_dir():
        raise DataError(f"{path}: expected a votes file, found a folder")
    if path.is_file() and path.stat().st_size and not is_annotation_file(path):
        raise DataError(
            f"{path}: not a votes file of `titjudge annotate` (no annotator and choice "
            "columns); give --votes a new file"
        )
    if not path.parent.is_dir():
        raise DataError(f"{path}: its folder {path.parent} does not exist")
    return path


def serve(catalog: object, args: argparse.Namespace, token: str | None) -> int:
    import asyncio

    from titjudge.errors import MissingDependencyError, install_hint

    try:
        from titjudge.workbench.server import serve as run_server
    except ImportError as exc:  # aiohttp: the served app needs it, a --bundle does not
        raise MissingDependencyError(
            f"titjudge view needs aiohttp to serve ({exc}); install it with "
            f"{install_hint('annotate')}, or write a static copy with --bundle DIR"
        ) from None
    votes = check_votes(Path(args.votes)) if args.votes is not None else None

    def ready(port: int) -> None:
        url = app_url(args.host, port, token)
        print(f"{len(catalog.runs)} runs under {catalog.root}")  # type: ignore[attr-defined]
        if votes is not None:
            print(f"annotation queue answers go to {votes} (/annotate/)")
        print(f"open {url}   (Ctrl-C stops)", flush=True)
        if args.open:
            import webbrowser

            webbrowser.open(url)

    where = (args.host, args.port)
    try:
        asyncio.run(run_server(catalog, where, token, votes, ready))  # type: ignore[arg-type]
    except KeyboardInterrupt:
        print("stopped")
    return 0
