"""Run the whole benchmark suite and write benchmarks/RESULTS.md (see benchmarks/README.md).

  python benchmarks/run_all.py            # full sizes (about 20 minutes on 2 cores)
  python benchmarks/run_all.py --quick    # small sizes: a smoke check of every benchmark
  python benchmarks/run_all.py --only overhead,startup   # re-run some sections, keep the rest

Every section is measured against a baseline taken in the same run. Machine facts and
the load average at start and end go to the top of the file, since other jobs on the
machine make the numbers noisy.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ablation_grid  # noqa: E402
import api_throughput  # noqa: E402
import batch_line_build  # noqa: E402
import batch_spend  # noqa: E402
import cached_rerun  # noqa: E402
import cached_variants  # noqa: E402
import call_overhead  # noqa: E402
import cli_startup  # noqa: E402
import dead_endpoint  # noqa: E402
import embedding_judge  # noqa: E402
import estimate_cost  # noqa: E402
import graph_overhead  # noqa: E402
import image_memory  # noqa: E402
import long_tail  # noqa: E402
import long_tail_dialects  # noqa: E402
import public_import  # noqa: E402
import rate_limit  # noqa: E402
import ray_actors  # noqa: E402
import replicas  # noqa: E402
import wire_speed  # noqa: E402
import workbench_scale  # noqa: E402
from harness import HERE, Section, Table, machine_facts  # noqa: E402

RESULTS = HERE / "RESULTS.md"
QUICK_RESULTS = Path(tempfile.gettempdir()) / "titjudge-RESULTS-quick.md"
#: section keys in the order RESULTS.md shows them
ORDER = (
    "throughput",
    "rate_limit",
    "ablation",
    "overhead",
    "embedding",
    "startup",
    "memory",
    "graph",
    "images",
    "rerun",
    "long_tail",
    "long_tail_dialects",
    "variants",
    "replicas",
    "ray",
    "dead_endpoint",
    "estimate",
    "batch_spend",
    "batch_lines",
    "public_import",
    "workbench",
    "wire_speed",
)
#: what each runner produces (api_throughput makes two sections in one pass)
RUNNERS: dict[str, tuple[tuple[str, ...], Callable[[bool, Path], Section | list[Section]]]] = {
    "api": (("throughput", "memory"), api_throughput.run),
    "rate_limit": (("rate_limit",), rate_limit.run),
    "replicas": (("replicas",), replicas.run),
    "ablation": (("ablation",), ablation_grid.run),
    "overhead": (("overhead",), call_overhead.run),
    "embedding": (("embedding",), embedding_judge.run),
    "startup": (("startup",), cli_startup.run),
    "graph": (("graph",), graph_overhead.run),
    "images": (("images",), image_memory.run),
    "rerun": (("rerun",), cached_rerun.run),
    "long_tail": (("long_tail",), long_tail.run),
    "long_tail_dialects": (("long_tail_dialects",), long_tail_dialects.run),
    "variants": (("variants",), cached_variants.run),
    "ray": (("ray",), ray_actors.run),
    "dead_endpoint": (("dead_endpoint",), dead_endpoint.run),
    "estimate": (("estimate",), estimate_cost.run),
    "batch_spend": (("batch_spend",), batch_spend.run),
    "batch_lines": (("batch_lines",), batch_line_build.run),
    "public_import": (("public_import",), public_import.run),
    "workbench": (("workbench",), workbench_scale.run),
    "wire_speed": (("wire_speed",), wire_speed.run),
}
_BLOCK = re.compile(r"<!-- section:(\w+) (\[.*?\]) -->\n(.*?)<!-- /section:\1 -->\n", re.S)


def _block(section: Section) -> str:
    return (
        f"<!-- section:{section.key} {json.dumps(section.headlines, ensure_ascii=False)} -->\n"
        f"{section.markdown()}<!-- /section:{section.key} -->\n"
    )


def _failed(key: str, runner: str, exc: Exception) -> Section:
    """A section that records its runner's failure instead of numbers."""
    section = Section(key, f"{key} (runner `{runner}` FAILED)", "No numbers: the benchmark raised.")
    section.when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section.skipped = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return section


_OPENER = re.compile(r"<!-- section:(\w+) ")
_CLOSER = re.compile(r"<!-- /section:\w+ -->\n")


def previous_blocks(path: Path) -> dict[str, tuple[list[list[str]], str]]:
    """Sections of an earlier RESULTS.md: key -> (headlines, markdown block). A section
    opened and never closed (a hand edit that lost its closing marker) is a ValueError, as
    the next write would drop it."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    found = {m.group(1): (json.loads(m.group(2)), m.group(0)) for m in _BLOCK.finditer(text)}
    unclosed = [key for key in _OPENER.findall(text) if key not in found]
    if unclosed:
        raise ValueError(
            f"{path}: section(s) {', '.join(unclosed)} have no closing "
            f"'<!-- /section:KEY -->' line; restore it before re-running some runners"
        )
    return found


def hand_sections(path: Path) -> str:
    """What an earlier RESULTS.md holds after its last generated section: the sections
    written by hand (real servers, real models), kept as they are."""
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    closers = list(_CLOSER.finditer(text))
    return text[closers[-1].end() :].strip("\n") if closers else ""


def render(
    facts: dict[str, str],
    loads: tuple[float, float],
    mode: str,
    seconds: float,
    blocks: dict[str, tuple[list[list[str]], str]],
    rerun: list[str],
    by_hand: str = "",
) -> str:
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# titjudge benchmark results",
        "",
        f"Written by `python benchmarks/run_all.py{' --quick' if mode == 'quick' else ''}` on {when} "
        f"({mode} sizes, {seconds / 60:.1f} min). What each benchmark measures and how: "
        "[benchmarks/README.md](README.md). Every number below is a single run on a shared machine; each "
        "section gives the load average around it.",
        "",
    ]
    if rerun:
        lines += [
            f"Runners re-run in this invocation: {', '.join(rerun)}; the other sections are from an earlier "
            "invocation (each section says when it was measured and under what load).",
            "",
        ]
    machine = Table(["fact", "value"])
    for key, value in facts.items():
        machine.add(key, value)
    machine.add(
        "1-minute load average",
        f"{loads[0]:.2f} at start, {loads[1]:.2f} at end of this invocation",
    )
    lines += ["## Machine", "", machine.markdown(), ""]
    summary = Table(["measure", "titjudge", "baseline (same run)"])
    for key in ORDER:
        for measure, result, baseline in blocks.get(key, ([], ""))[0]:
            summary.add(measure, result, baseline)
    lines += ["## Summary", "", summary.markdown(), ""]
    lines += [blocks[key][1] for key in ORDER if key in blocks]
    if by_hand:
        lines += [by_hand, ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke check")
    parser.add_argument("--only", help=f"comma list of runners to re-run: {', '.join(RUNNERS)}")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument(
        "--out",
        type=Path,
        help="results file (default: benchmarks/RESULTS.md; with --quick "
        f"{QUICK_RESULTS}, so a smoke check never replaces the full results)",
    )
    args = parser.parse_args(argv)
    args.out = args.out or (QUICK_RESULTS if args.quick else RESULTS)
    logging.basicConfig(level=logging.WARNING)
    chosen = (
        list(RUNNERS)
        if not args.only
        else [name.strip() for name in args.only.split(",") if name.strip()]
    )
    unknown = [name for name in chosen if name not in RUNNERS]
    if unknown:
        parser.error(f"unknown runner(s) {', '.join(unknown)}; choose from {', '.join(RUNNERS)}")
    try:
        blocks = previous_blocks(args.out) if args.only else {}
    except ValueError as exc:
        parser.error(str(exc))
    by_hand = hand_sections(args.out)
    start_load, started = os.getloadavg()[0], time.perf_counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="titjudge-bench-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for name in chosen:
            print(
                f"[{time.strftime('%H:%M:%S')}] {name} (load {os.getloadavg()[0]:.2f}) ...",
                flush=True,
            )
            try:
                made = RUNNERS[name][1](args.quick, work)
            except (
                Exception
            ) as exc:  # a broken benchmark is reported in its sections; the others still run
                logging.exception("benchmark %s failed", name)
                failures.append(name)
                made = [_failed(key, name, exc) for key in RUNNERS[name][0]]
            for section in made if isinstance(made, list) else [made]:
                blocks[section.key] = ([list(h) for h in section.headlines], _block(section))
                print(section.markdown(), flush=True)
    seconds = time.perf_counter() - started
    text = render(
        machine_facts(),
        (start_load, os.getloadavg()[0]),
        "quick" if args.quick else "full",
        seconds,
        blocks,
        chosen if args.only else [],
        by_hand,
    )
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({seconds / 60:.1f} min)")
    if failures:
        print(f"FAILED: {', '.join(failures)} (tracebacks above)", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
