"""Benchmark 5: CLI start-up, the wall time of `titjudge --help`.

Baselines measured in the same run: a bare interpreter (`python -c pass`) and an
interpreter that imports litellm (what `--help` would cost if the CLI imported its API
backend eagerly instead of when a run builds it). Median of several runs each, with the
sample spread. Bytecode is cached (in the scratch folder) as for an installed package, even
where PYTHONDONTWRITEBYTECODE is set. A note gives `python -X importtime -m titjudge --help`:
what the CLI's own modules cost, and that no heavy library is imported.

  python benchmarks/cli_startup.py [--quick]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Section,
    Table,
    child_env,
    fmt,
    median_of,
    standalone,
    time_command,
    timed_section,
)

#: libraries `titjudge --help` must not import (handlers load them when a command runs)
HEAVY = (
    "torch",
    "transformers",
    "litellm",
    "langgraph",
    "numpy",
    "pandas",
    "pydantic",
    "rich",
    "PIL",
)

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
    found = shutil.which("titjudge")
    where = (
        f"`titjudge` is `{found}` (found on PATH, as a user would run it)"
        if found
        else f"`titjudge` is `{sys.executable} -m titjudge` (no `titjudge` script on PATH)"
    )
    method = (
        f"{where}. "
        f"Wall seconds of each command in a fresh process, {repeats} runs after one warm-up run (OS file "
        "cache warm); median, min and max."
    )

    env = child_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")

    def body(section: Section) -> None:
        table = Table(["command", "median s", "min s", "max s", "over the interpreter floor s"])
        floor = None
        for label, command in commands:
            time_command(command, 1, env)
            samples = time_command(command, repeats, env)
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
        section.notes.append(_import_note(env))

    return timed_section("startup", TITLE, method, body)


def _import_note(env: dict[str, str]) -> str:
    """`-X importtime` of `titjudge --help`: the CLI's own import time and any heavy module."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "titjudge", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    cumulative: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, total, name = line.split("|")
            if total.strip().isdigit():
                cumulative[name.strip()] = int(total)
    heavy = sorted(m for m in cumulative if m.split(".")[0] in HEAVY)
    return (
        f"`python -X importtime -m titjudge --help`: importing `titjudge.cli` (the parser and its "
        f"command modules) takes {cumulative['titjudge.cli'] / 1000:.1f} ms; heavy libraries "
        f"imported ({', '.join(HEAVY)}): {', '.join(heavy) if heavy else 'none'}"
    )


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
