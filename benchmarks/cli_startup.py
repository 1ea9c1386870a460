"""Benchmark 5: CLI start-up, the wall time of `titjudge --help`.

Baselines measured in the same run: a bare interpreter (`python -c pass`) and an
interpreter that imports litellm (what `--help` would cost if the CLI imported its API
backend eagerly instead of when a run builds it). Median of several runs each, with the
sample spread.

  python benchmarks/cli_startup.py [--quick]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Section, Table, fmt, median_of, standalone, time_command, timed_section  # noqa: E402

TITLE = "5. CLI start-up"


def _titjudge() -> list[str]:
    found = shutil.which("titjudge")
    return [found] if found else [sys.executable, "-m", "titjudge"]


def run(quick: bool, work: Path) -> Section:
    repeats = 3 if quick else 7
    commands = [
        ("`python -c pass` (interpreter floor)", [sys.executable, "-c", "pass"]),
        ("`titjudge --help`", [*_titjudge(), "--help"]),
        ("`titjudge run --help`", [*_titjudge(), "run", "--help"]),
        ("`python -c 'import litellm'` (for scale)", [sys.executable, "-c", "import litellm"]),
    ]
    method = (
        f"`titjudge` is `{_titjudge()[0]}` (found on PATH, as a user would run it). "
        f"Wall seconds of each command in a fresh process, {repeats} runs after one warm-up run (OS file "
        "cache warm); median, min and max."
    )

    def body(section: Section) -> None:
        table = Table(["command", "median s", "min s", "max s", "over the interpreter floor s"])
        floor = None
        for label, command in commands:
            time_command(command, 1)
            samples = time_command(command, repeats)
            median = median_of(samples)
            floor = median if floor is None else floor
            if label == "`titjudge --help`":
                section.headline(
                    "CLI start-up, `titjudge --help`",
                    f"{median:.3f} s",
                    f"`python -c pass` {floor:.3f} s",
                )
            table.add(
                label,
                fmt(median, 3),
                fmt(min(samples), 3),
                fmt(max(samples), 3),
                "-" if median is floor else fmt(median - floor, 3),
            )
        section.tables.append(table)

    return timed_section("startup", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
