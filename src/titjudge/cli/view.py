"""`titjudge view [RUNS] [--host H] [--port N] [--open] [--bundle DIR]`: the workbench, one
local web app over every run and ablation grid under a folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from titjudge.cli.common import arg, command

EPILOG = """\
Every run under RUNS (a run dir, a <run.out>/<name> folder, a run.out folder, an ablation
grid; default: the --config's run.out, else ./runs) in one page: each run's numbers, models,
cost and status; two runs' config changes and paired tests; every human pair with each
run's each judge's verdict and rationale side by side, filtered (every judge wrong, judges
disagree, changed between two runs, prompt length, T2I model, judge kind, text in the
rationales); the Table 4 heatmap, accuracy by prompt length, the leaderboard and each
judge's calibration. It reads run dirs and never writes them. Binds 127.0.0.1; any other
--host requires the token the printed URL carries. --bundle DIR writes the same as a
folder whose index.html works from file:// instead of serving it.
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
        arg("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"),
        arg("--port", type=int, default=8767, help="port (default 8767; 0 picks one)"),
        arg("--open", action="store_true", help="open the page in a browser"),
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
    from titjudge.errors import ConfigError, MissingDependencyError, install_hint

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0 to 65535, got {args.port}")
    try:
        from titjudge.workbench.catalog import Catalog
    except ImportError as exc:  # aiohttp, through the app's safety module
        raise MissingDependencyError(
            f"titjudge view needs aiohttp ({exc}); install it with {install_hint('annotate')}"
        ) from None
    catalog = Catalog.find(runs_folder(args))
    if args.bundle is not None:
        from titjudge.workbench.bundle import write_bundle

        page = write_bundle(catalog, Path(args.bundle))
        print(f"wrote {page} ({len(catalog.runs)} runs): open it in a browser")
        return 0
    return serve(catalog, args)


def serve(catalog: object, args: argparse.Namespace) -> int:
    import asyncio
    import secrets
    import socket

    from titjudge.annotate.web import is_loopback
    from titjudge.workbench.server import serve as run_server

    token = None if is_loopback(args.host) else secrets.token_urlsafe(18)

    def ready(port: int) -> None:
        host = args.host
        if host in ("0.0.0.0", "::", ""):
            host = socket.gethostname()
        shown = f"[{host}]" if ":" in host else host
        query = f"?token={token}" if token else ""
        url = f"http://{shown}:{port}/{query}"
        print(f"{len(catalog.runs)} runs under {catalog.root}")  # type: ignore[attr-defined]
        print(f"open {url}   (Ctrl-C stops)", flush=True)
        if args.open:
            import webbrowser

            webbrowser.open(url)

    try:
        asyncio.run(run_server(catalog, args.host, args.port, token, ready))  # type: ignore[arg-type]
    except KeyboardInterrupt:
        print("stopped")
    return 0
