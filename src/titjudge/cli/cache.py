"""`titjudge cache stats`, `clear` and `merge`: the model-call cache.

`stats` and `clear` open an existing cache only: a `--cache-dir` with no cache in it is one
line ("no cache at DIR"), exit 2, and nothing is created there. `merge` reads existing caches
and writes into `--into`, which it makes when there is none yet.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from titjudge.cli.common import command, wide_console


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `cache` and its two subcommands."""
    cache = subparsers.add_parser("cache", help="the model-call cache: stats, clear, merge")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="CACHE_COMMAND", required=True)
    p = command(
        cache_sub, "stats", stats, "entries, size, per-model counts, hits/misses of the last run"
    )
    p.add_argument("--cache-dir", type=Path, default=Path(".titjudge/cache"))
    p = command(cache_sub, "clear", clear, "drop cached answers (all, or one model's)")
    p.add_argument("--cache-dir", type=Path, default=Path(".titjudge/cache"))
    p.add_argument("--model", help="only this model spec, e.g. litellm:openai/gpt-4o")
    p = command(
        cache_sub,
        "merge",
        merge,
        "copy other caches' answers into one (runs split over machines pay for no call twice)",
    )
    p.add_argument("sources", nargs="+", type=Path, metavar="CACHE_DIR", help="caches to read")
    p.add_argument(
        "--into", type=Path, default=Path(".titjudge/cache"), help="the cache that receives them"
    )


def stats(args: argparse.Namespace) -> int:
    """Print the cache's entries, size, per-model counts and the last run's hits and misses."""
    from rich.table import Table

    from titjudge.cache.store import CallCache
    from titjudge.errors import DataError

    cache = CallCache(args.cache_dir, create=False)
    console = wide_console()
    console.print(f"cache dir: {args.cache_dir}")
    console.print(f"entries: {cache.entries()}  size: {cache.volume() / 1e6:.2f} MB")
    models = cache.models()
    if models:
        table = Table("model", "entries")
        for model, count in sorted(models.items()):
            table.add_row(model, str(count))
        console.print(table)
    try:
        last = cache.last_run_stats()
    except DataError as exc:  # the counts are a report, not the cache: say so and carry on
        console.print(f"last run: unreadable ({exc})", markup=False, soft_wrap=True)
        cache.close()
        return 0
    if last:
        total = last["hits"] + last["misses"]
        rate = f"{100 * last['hits'] / total:.1f}%" if total else "n/a"
        console.print(
            f"last run ({last.get('run', '?')}): {last['hits']} hits, {last['misses']} misses "
            f"(hit rate {rate}), {last['writes']} writes"
        )
    else:
        console.print("last run: none recorded")
    cache.close()
    return 0


def clear(args: argparse.Namespace) -> int:
    """Drop every cached answer, or only those of `--model`."""
    from titjudge.cache.store import CallCache

    cache = CallCache(args.cache_dir, create=False)
    removed = cache.clear(args.model)
    what = f"entries of {args.model}" if args.model else "entries"
    print(f"removed {removed} {what} from {args.cache_dir}")
    cache.close()
    return 0


def merge(args: argparse.Namespace) -> int:
    """Copy every answer of each source cache that `--into` lacks (the keys name the
    requests' content, so an answer already there stands), and the facts it lacks."""
    from titjudge.cache.store import CallCache
    from titjudge.errors import ConfigError

    into = args.into.resolve()
    for source in args.sources:
        if source.resolve() == into:
            raise ConfigError(f"cache merge: {source} is the cache merged into (--into)")
    sources = [CallCache(source, create=False) for source in args.sources]
    target = CallCache(args.into)
    try:
        for source, cache in zip(args.sources, sources, strict=True):
            done = target.merge_from(cache)
            differed = (
                f" ({done.differed} with another answer: {args.into}'s kept)"
                if done.differed
                else ""
            )
            print(
                f"merged {source} into {args.into}: {done.added} answers added, "
                f"{done.same + done.differed} already there{differed}, {done.facts} facts added"
            )
    finally:
        for cache in (*sources, target):
            cache.close()
    return 0
