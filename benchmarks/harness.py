"""What every benchmark shares: result sections, machine facts, the loopback server in its
own process, child-process runs (wall, CPU, peak RSS) and the synthetic benchmark.

The benchmarks are scripts, not a package: each imports this module from its own folder,
which also puts the repository's tests/ on sys.path for the test doubles (`doubles.server`,
`doubles.tiny_models`), which are not part of the installed titjudge.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: holds the `doubles` package (fake OpenAI server, tiny checkpoints)
TESTS = REPO / "tests"
if str(TESTS) not in sys.path:
    sys.path.append(str(TESTS))
#: the key the benchmark configs name with api_key_env (the loopback server ignores it)
KEY_ENV = "TITJUDGE_BENCH_KEY"
KEY = "sk-bench"
PACKAGES = (
    "titjudge",
    "litellm",
    "langgraph",
    "openai",
    "httpx",
    "aiohttp",
    "diskcache",
    "pydantic",
    "torch",
    "transformers",
    "tokenizers",
    "numpy",
    "scipy",
)


# --------------------------------------------------------------------------- results


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    caption: str = ""

    def add(self, *cells: object) -> None:
        self.rows.append([str(c) for c in cells])

    def markdown(self) -> str:
        lines = [f"*{self.caption}*", ""] if self.caption else []
        lines.append("| " + " | ".join(self.headers) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in self.rows)
        return "\n".join(lines)


@dataclass
class Section:
    """One benchmark's results as RESULTS.md shows them."""

    key: str
    title: str
    method: str
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load: tuple[float, float] = (0.0, 0.0)
    seconds: float = 0.0
    skipped: str | None = None
    #: when the section was measured (UTC), since `run_all --only` mixes invocations
    when: str = ""
    #: rows of the summary table at the top of RESULTS.md: (measure, titjudge, baseline)
    headlines: list[tuple[str, str, str]] = field(default_factory=list)

    def headline(self, measure: str, result: str, baseline: str) -> None:
        self.headlines.append((measure, result, baseline))

    def markdown(self) -> str:
        parts = [f"## {self.title}", "", self.method, ""]
        if self.skipped:
            parts += [f"**Skipped:** {self.skipped}", ""]
        for table in self.tables:
            parts += [table.markdown(), ""]
        parts += [f"- {note}" for note in self.notes]
        parts.append(
            f"- measured {self.when}, took {self.seconds:.0f} s; 1-minute load average "
            f"{self.load[0]:.2f} at start, {self.load[1]:.2f} at end"
        )
        return "\n".join(parts) + "\n"


def timed_section(key: str, title: str, method: str, body: Callable[[Section], None]) -> Section:
    """Run `body(section)`, recording the load average around it and the time it took."""
    section = Section(
        key, title, method, when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    )
    start_load = os.getloadavg()[0]
    started = time.perf_counter()
    body(section)
    section.seconds = time.perf_counter() - started
    section.load = (start_load, os.getloadavg()[0])
    return section


def fmt(value: float, digits: int = 2) -> str:
    return f"{value:,.{digits}f}"


def median_of(samples: Sequence[float]) -> float:
    return float(statistics.median(samples))


# --------------------------------------------------------------------------- machine facts


def _meminfo_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _gpu() -> str:
    try:
        import torch
    except ImportError:
        return "torch not installed"
    if not torch.cuda.is_available():
        return "none (torch.cuda.is_available() is False)"
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return ", ".join(names)


def machine_facts() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "cores": f"{os.cpu_count()} logical ({len(os.sched_getaffinity(0))} usable by this process)",
        "memory": f"{_meminfo_gib():.1f} GiB",
        "cpu": _cpu_model(),
        "gpu": _gpu(),
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": ", ".join(f"{k} {v}" for k, v in versions.items()),
    }


# --------------------------------------------------------------------------- processes


def cpu_seconds_of(pid: int) -> float:
    """User + system CPU seconds a live process has used so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_url_process(
    command: Sequence[str], log: Any, timeout: float = 60.0, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start a server command that prints its base URL as the first stdout line; wait for it.
    `env` defaults to `child_env()`."""
    proc = subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=child_env() if env is None else env,
        cwd=REPO,
    )
    line: list[str] = []
    reader = threading.Thread(
        target=lambda: line.append(proc.stdout.readline() if proc.stdout else ""), daemon=True
    )
    reader.start()
    reader.join(timeout)
    url = line[0].strip() if line else ""
    if not url.startswith("http://"):
        stop_process(proc)
        raise RuntimeError(f"{' '.join(command)} printed no URL within {timeout:g} s (got {url!r})")
    return proc, url


def stop_process(proc: subprocess.Popen[str], timeout: float = 10.0) -> None:
    """SIGTERM, wait, SIGKILL if needed (only the process we started)."""
    from doubles.server import stop_server_process

    stop_server_process(proc, timeout)


class ServerProcess:
    """A loopback OpenAI-compatible server in a process of its own, so its CPU does not
    count against the client being measured. Default: `python -m doubles.server ARGS` with
    tests/ on PYTHONPATH."""

    def __init__(
        self,
        args: Sequence[str],
        log_path: Path | None = None,
        command: Sequence[str] | None = None,
    ):
        self._log: Any = open(log_path, "w") if log_path else subprocess.DEVNULL  # noqa: SIM115
        env = None
        if command is None:
            from doubles.server import server_command, server_env

            command, env = server_command(), server_env(child_env())
        self.proc, self.url = start_url_process([*command, *args], self._log, env=env)

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def stats(self, records: int = 0) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.root}/stats?records={records}", timeout=30) as reply:
            return dict(json.loads(reply.read()))

    def cpu_seconds(self) -> float:
        return cpu_seconds_of(self.proc.pid)

    def close(self) -> None:
        stop_process(self.proc)
        if self._log is not subprocess.DEVNULL:
            self._log.close()


@contextmanager
def server_process(
    args: Sequence[str], log_path: Path | None = None, command: Sequence[str] | None = None
) -> Iterator[ServerProcess]:
    server = ServerProcess(args, log_path, command)
    try:
        yield server
    finally:
        server.close()


def run_measured(command: Sequence[str], log_path: Path) -> tuple[int, float, float, float]:
    """(exit code, wall s, CPU s, peak RSS MiB) of one child command, from os.wait4's rusage;
    its stdout and stderr go to `log_path`."""
    with open(log_path, "w") as log:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(command), stdout=log, stderr=subprocess.STDOUT, env=child_env(), cwd=REPO
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env[KEY_ENV] = KEY
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return env


def run_child(
    script: str, args: Sequence[str], timeout: float = 1800.0, package: str | None = None
) -> dict[str, Any]:
    """Run `python benchmarks/<script> ARGS`; its last stdout line is a JSON report.
    `package`: a folder holding another titjudge (a `git archive` baseline's src), put
    first on the child's PYTHONPATH."""
    command = [sys.executable, str(HERE / script), *args]
    env = child_env()
    if package is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package, env.get("PYTHONPATH")]))
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{script} {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}"
        )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return dict(json.loads(lines[-1]))


def time_command(
    command: Sequence[str], repeats: int, env: dict[str, str] | None = None
) -> list[float]:
    """Wall seconds of `repeats` runs of a command (output discarded); a failure raises.

    `env` defaults to `child_env()`."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(
            command,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=child_env() if env is None else env,
        )
        samples.append(time.perf_counter() - started)
    return samples


def baseline_src(work: Path, ref: str) -> Path:
    """The package as it was at `ref` (`git archive REF src`), unpacked under `work` once;
    checked to be what a child with it first on PYTHONPATH imports."""
    import tarfile
    from io import BytesIO

    target = work / f"baseline-{ref}"
    if not (target / "src" / "titjudge").is_dir():
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", ref, "src"], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    src = target / "src"
    found = subprocess.run(
        [sys.executable, "-c", "import titjudge; print(titjudge.__file__)"],
        env={**child_env(), "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not found.startswith(str(src)):
        raise RuntimeError(f"a child with {src} on PYTHONPATH imports {found}, not the baseline")
    return src


# --------------------------------------------------------------------------- data


def synthetic(work: Path, n_prompts: int, n_models: int, seed: int = 0) -> Path:
    """The synthetic benchmark of that size under `work` (written once per suite run)."""
    from titjudge.data.synth.benchmark import synthesize

    out = work / f"synth-{n_prompts}x{n_models}-s{seed}"
    stamp = out / ".bench-complete"
    if not stamp.is_file():
        if out.exists():
            shutil.rmtree(out)
        synthesize(
            out, n_prompts=n_prompts, n_models=n_models, seed=seed, workers=os.cpu_count() or 1
        )
        stamp.write_text("ok")
    return out


def fresh_dir(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def latest_run_dir(name_dir: Path) -> Path:
    """The run dir a `<run.out>/<name>` folder's LATEST names; the folder itself where there is
    no LATEST (a run written before runs were kept apart, e.g. by a baseline revision)."""
    pointer = name_dir / "LATEST"
    return name_dir / pointer.read_text().strip() if pointer.is_file() else name_dir


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def standalone(run: Callable[[bool, Path], Section], doc: str | None) -> int:
    """`python benchmarks/<name>.py [--quick]`: run one benchmark, print its section."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(run(args.quick, Path(tmp)).markdown())
    return 0
