#!/usr/bin/env python3
"""Drift check: does the suite pass on the releases a new user can get today?

Each mode builds a brand-new virtualenv from a fresh clone of HEAD, installs titjudge[dev]
one way, runs the README's test command (`python -m pytest -q -n 2`) and records the versions and
the result in docs/dependencies.md:

- `lock`:   `pip install -c requirements.lock ...`, the README's set-up (what CI tests);
- `newest`: no lock, the newest releases pyproject's ranges allow (what `pip install -e .`
            gives a new user today);
- `lowest`: every direct dependency at the lowest release its range allows (uv's
            `--resolution lowest-direct`), transitive ones as new as those allow.

torch is installed first, as the README does; only the lock's is a CPU build (the newest
and the lowest torch on PyPI are CUDA builds, several GB of packages that import and run on
a machine without a GPU).

    python scripts/drift_check.py newest --write-lock   # refresh requirements.lock when green
    python scripts/drift_check.py lowest
    python scripts/drift_check.py lock newest lowest    # all three, one after another

`--write-lock` rewrites requirements.lock from the `newest` venv, and only when its suite
passed. Exit status: 0 when every mode run passed, 1 otherwise, 2 on bad usage or a failed
install.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
RECORD = ROOT / "docs" / "dependencies.md"
RUNS = ROOT / "docs" / "drift.json"
MODES = ("lock", "newest", "lowest")
BEGIN, END = "<!-- drift:begin -->", "<!-- drift:end -->"
SUMMARY = re.compile(r"^=*\s*(?P<body>(?:\d+ \w+(?:, )?)+) in (?P<secs>[\d.]+)s", re.M)


def sh(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    print("+", shlex.join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, env=env, check=True)


def lower_bounds() -> dict[str, str]:
    """Each direct dependency's declared lower bound (`>=X`), by distribution name."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += [s for s in extra if not s.startswith("titjudge[")]
    bounds = {}
    for spec in specs:
        found = re.match(r"([A-Za-z0-9_.\-]+)(?:\[[^]]*\])?\s*>=\s*([^,; ]+)", spec)
        if found:
            bounds[found.group(1).lower().replace("_", "-")] = found.group(2)
    return bounds


def unmet_lower_bounds(versions: dict[str, str]) -> list[str]:
    """Direct dependencies that the lowest resolution could not take at their declared lower
    bound: the range claims a release that cannot be installed with the others."""
    return [
        f"{name} >= {low} declared, lowest installable {versions[name]}"
        for name, low in sorted(lower_bounds().items())
        if name in versions and _norm(versions[name]) != _norm(low)
    ]


def _norm(version: str) -> str:
    """`10`, `10.0` and `10.0.0` name one release."""
    parts = version.split(".")
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def direct_requirements() -> list[str]:
    """The distribution names pyproject.toml lists (core and every extra), lower-cased."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += [s for s in extra if not s.startswith("titjudge[")]
    return sorted({re.split(r"[<>=!~\[; ]", s, maxsplit=1)[0].lower() for s in specs})


def pip_find_links() -> list[str]:
    """The find-links pip is configured with (uv does not read pip's configuration)."""
    links = os.environ.get("PIP_FIND_LINKS", "").split()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
        ).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if "find-links" in line:
            links += line.split("=", 1)[1].strip().strip("'\"").split()
    return sorted(set(links))


def install(mode: str, clone: Path, venv: Path) -> None:
    """The README's two installs, with the lock (`lock`), without it (`newest`), or with every
    direct dependency at its lower bound (`lowest`). torch comes first, as in the README."""
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    if mode == "lock":
        sh([*pip, "-c", str(LOCK), "torch"], cwd=clone)
        sh([*pip, "-c", str(LOCK), "-e", ".[dev]"], cwd=clone)
    elif mode == "newest":
        sh([*pip, "torch"], cwd=clone)
        sh([*pip, "-e", ".[dev]"], cwd=clone)
    else:
        sh([*pip, "uv"], cwd=clone)
        links = [arg for link in pip_find_links() for arg in ("--find-links", link)]
        uv = [str(venv / "bin" / "uv"), "pip", "install", "--python", str(venv / "bin" / "python")]
        sh([*uv, "-q", "--resolution", "lowest-direct", *links, "-e", ".[dev]"], cwd=clone)


def installed(venv: Path) -> dict[str, str]:
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(out)}


def run_suite(clone: Path, venv: Path, log: Path) -> dict[str, object]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider"],
            cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    text = log.read_text(errors="replace")
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    found = SUMMARY.findall(text)
    if found:
        for part in found[-1][0].split(", "):
            n, word = part.split(" ", 1)
            key = "errors" if word.startswith("error") else word
            if key in counts:
                counts[key] = int(n)
    failures = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.M)))
    return {
        "exit": proc.returncode,
        **counts,
        "failures": failures,
        "seconds": round(time.monotonic() - start),
    }


#: torch's CUDA runtime packages: a CPU build needs none of them
CUDA_ONLY = re.compile(r"^(nvidia-|cuda-|triton==)", re.I)


def write_lock(venv: Path) -> None:
    """The newest venv's packages, exact, except torch: the lock keeps its CPU build (and none
    of the CUDA packages a PyPI torch brings), so the README's install stays CPU-only. The
    set written is then proven by `drift_check.py lock`."""
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    torch = next(
        (line for line in LOCK.read_text().splitlines() if line.startswith("torch==")), None
    )
    pins = []
    for line in out.splitlines():
        if "==" not in line or CUDA_ONLY.match(line):
            continue
        if line.startswith("torch==") and torch is not None:
            line = torch
        pins.append(re.sub(r"\+[\w.]+$", "", line))  # a local label (+cpu) names a build
    pins.sort(key=str.lower)
    head = (
        '# titjudge\'s tested set: every package of `pip install -e ".[dev]"`, exact.\n'
        "# The README's set-up installs with `-c requirements.lock`; CI runs that line.\n"
        f"# Written by `python scripts/drift_check.py newest --write-lock` on {dt.date.today()}\n"
        "# from a fresh venv whose suite passed, torch held at its CPU build; then proven by\n"
        "# `python scripts/drift_check.py lock` (docs/dependencies.md has both runs).\n"
    )
    LOCK.write_text(head + "\n".join(pins) + "\n")
    print(f"drift_check: wrote {LOCK.relative_to(ROOT)} ({len(pins)} pins); now run: lock")


def record(results: list[dict[str, object]]) -> None:
    """Keep the newest run of each mode in docs/drift.json and render docs/dependencies.md."""
    runs = {r["mode"]: r for r in json.loads(RUNS.read_text())} if RUNS.exists() else {}
    runs.update({str(r["mode"]): r for r in results})
    ordered = [runs[m] for m in MODES if m in runs]
    RUNS.write_text(json.dumps(ordered, indent=1, sort_keys=True) + "\n")
    lines = [
        "| package | " + " | ".join(str(r["mode"]) for r in ordered) + " |",
        "|---|" + "---|" * len(ordered),
    ]
    for name in direct_requirements():
        cells = [str(r["versions"].get(name, "-")) for r in ordered]  # type: ignore[attr-defined]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for key in ("python", "commit", "date"):
        lines.append(f"| *{key}* | " + " | ".join(str(r[key]) for r in ordered) + " |")
    lines.append(
        "| **suite** | "
        + " | ".join(
            f"{r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped, "
            f"{r['errors']} errors ({r['seconds']} s)"
            for r in ordered
        )
        + " |"
    )
    for r in ordered:
        for line in r.get("unmet_lower_bounds", []):  # type: ignore[attr-defined]
            lines.append(f"\nLower bound not installable under `{r['mode']}`: {line}")
        if r["failures"]:
            names = ", ".join(f"`{f}`" for f in r["failures"])  # type: ignore[attr-defined]
            lines.append(f"\nFailed under `{r['mode']}`: {names}")
    text = RECORD.read_text() if RECORD.exists() else f"# Dependencies\n\n{BEGIN}\n{END}\n"
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    RECORD.write_text(f"{before}{BEGIN}\n" + "\n".join(lines) + f"\n{END}{after}")
    print(f"drift_check: recorded in {RECORD.relative_to(ROOT)} and {RUNS.relative_to(ROOT)}")


def check(mode: str, keep: bool, lock_out: bool) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix=f"titjudge-drift-{mode}-"))
    clone, venv, log = work / "src", work / "venv", work / "pytest.log"
    sh(["git", "clone", "-q", str(ROOT), str(clone)])
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True
    ).stdout.strip()
    sh([sys.executable, "-m", "venv", str(venv)])
    try:
        install(mode, clone, venv)
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"drift_check: {mode}: install failed ({exc}); work dir {work}") from None
    versions = installed(venv)
    print(f"drift_check: {mode}: running the suite (log: {log})", flush=True)
    result = run_suite(clone, venv, log)
    wanted = direct_requirements()
    summary = {
        "mode": mode,
        "date": dt.date.today().isoformat(),
        "commit": commit,
        "python": platform.python_version(),
        "versions": {n: versions[n] for n in wanted if n in versions},
        **result,
    }
    if mode == "lowest":
        summary["unmet_lower_bounds"] = unmet_lower_bounds(versions)
        for line in summary["unmet_lower_bounds"]:  # type: ignore[attr-defined]
            print(f"drift_check: lowest: {line}")
    print(
        f"drift_check: {mode}: {result['passed']} passed, {result['failed']} failed, "
        f"{result['skipped']} skipped, {result['errors']} errors in {result['seconds']} s"
    )
    if lock_out and mode == "newest":
        if result["exit"] == 0:
            write_lock(venv)
        else:
            print("drift_check: the newest releases fail the suite: requirements.lock kept")
    if not keep:
        subprocess.run(["rm", "-rf", str(work)], check=False)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modes", nargs="+", choices=MODES)
    parser.add_argument("--write-lock", action="store_true", help="refresh the lock (newest)")
    parser.add_argument("--keep", action="store_true", help="keep the venvs and logs")
    parser.add_argument("--no-record", action="store_true", help="do not touch the record")
    args = parser.parse_args()
    results = [check(mode, args.keep, args.write_lock) for mode in args.modes]
    if not args.no_record:
        record(results)
    return 0 if all(r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
