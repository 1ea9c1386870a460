"""CLI handlers: `titjudge cache stats` and `titjudge cache clear`."""

from __future__ import annotations

import argparse

from titjudge.cache.store import CallCache


def stats(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    cache = CallCache(args.cache_dir)
    console = Console()
    console.print(f"cache dir: {args.cache_dir}")
    console.print(f"entries: {len(cache)}  size: {cache.volume() / 1e6:.2f} MB")
    models = cache.models()
    if models:
        table = Table("model", "entries")
        for model, count in sorted(models.items()):
            table.add_row(model, str(count))
        console.print(table)
    last = cache.last_run_stats()
    if last:
        total = last["hits"] + last["misses"]
        rate = f"{100 * last['hits'] / total:.1f}%" if total else "n/a"
        console.print(
            f"last run ({last['run']}): {last['hits']} hits, {last['misses']} misses "
            f"(hit rate {rate}), {last['writes']} writes"
        )
    else:
        console.print("last run: none recorded")
    cache.close()
    return 0


def clear(args: argparse.Namespace) -> int:
    cache = CallCache(args.cache_dir)
    removed = cache.clear(args.model)
    what = f"entries of {args.model}" if args.model else "entries"
    print(f"removed {removed} {what} from {args.cache_dir}")
    cache.close()
    return 0
