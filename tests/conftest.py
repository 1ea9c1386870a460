"""Shared by every test package: the suite's CPU report (tests/cpu_report.py), the warm
`titjudge` child processes (tests/cli_process.py), whose forkserver is stopped at the end, and
the SYNTHETIC benchmarks, each made once per session (per xdist worker) for its shape. The
config builders are in tests/builders.py."""

from __future__ import annotations

import gc
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import builders
import pytest
from browser import ARTIFACTS

# Bytecode is kept (in git-ignored __pycache__ folders), as Python does by default: where the
# environment turns it off (PYTHONDONTWRITEBYTECODE), every test process and every titjudge
# child process would compile titjudge and the test modules again (~8 s of CPU a process)
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Ctrl-C reaches the runs the tests interrupt even where the suite itself was started with
# SIGINT ignored (a shell's background job: `pytest &`), which every child would inherit
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["cpu_report"]


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> builders.Synthetic:
    """`synthetic(n_prompts, n_models, seed=0, image_size=256)`: the folder (named `data`) of
    that SYNTHETIC benchmark, with stored descriptions and elements, made on first use in this
    session and shared after: a test must not change it (copy it: `data_copy`,
    `builders.copy_data`)."""
    made: dict[tuple[int, int, int, int], Path] = {}

    def make(n_prompts: int, n_models: int, seed: int = 0, image_size: int = 256) -> Path:
        key = (n_prompts, n_models, seed, image_size)
        if key not in made:
            from titjudge.data.synth.benchmark import synthesize

            base = tmp_path_factory.mktemp(f"synth-{n_prompts}x{n_models}-s{seed}-i{image_size}")
            # one process: the files are the same whatever the number of workers
            synthesize(
                base / "data", n_prompts, n_models, seed=seed, image_size=image_size, workers=1
            )
            made[key] = base / "data"
        return made[key]

    return make


@pytest.fixture(scope="session")
def synth_data(synthetic: builders.Synthetic) -> Path:
    """The common small SYNTHETIC benchmark: 4 prompts x 4 models, seed 0 (16 items)."""
    return synthetic(4, 4)


@pytest.fixture
def data_copy(synth_data: Path, tmp_path: Path) -> Path:
    """A private copy of `synth_data` (tmp_path/data) that a test may change."""
    return builders.copy_data(synth_data, tmp_path)


@pytest.fixture(scope="session")
def dead_judge_run(tmp_path_factory: pytest.TempPathFactory, synthetic: builders.Synthetic) -> Path:
    """A real run of issue 48's case (`builders.dead_judge_config`): SYNTHETIC 3 prompts x 4
    models, the judge `tit_llm` at a closed port falling back to `lexical`, its model stopped;
    every one of its 12 scores is lexical's."""
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.run.runner import run

    root = tmp_path_factory.mktemp("dead-judge")
    data = builders.copy_data(synthetic(3, 4, seed=5), root)
    raw = builders.dead_judge_config(data, root, builders.closed_url())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        return run(validate_config(raw, RunConfig, "dead judge config"), out=root / "run").run_dir


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the garbage collector's full passes off what collection made.

    A worker that collected the suite holds ~780,000 objects (torch, transformers, litellm,
    every test module), and a full collection walks them all: ~0.45 s each, where a
    `titjudge` process holds a fraction of that. Under CPython's default thresholds a worker
    ran ~40 full passes (automatic ones, and `gc.collect()` when a sentence-transformers model
    closes): 24 s of the suite's CPU, measured with `gc.callbacks`. `gc.freeze()` moves what
    exists now out of every later pass (next to none of it is garbage: modules, classes, the
    session's fixtures), and a tenfold third threshold runs full passes less often; objects the
    tests make are still collected. Measured together: 14.5 s.
    """
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    import cli_process

    cli_process.stop_forkserver()


_STARTED = time.time()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the screenshots the browser tests left in this session, so the CI log points at
    them (here, not in a package's conftest: under xdist only this one reaches the controller)."""
    for shot in sorted(ARTIFACTS.glob("*.png")):
        if shot.stat().st_mtime >= _STARTED:
            terminalreporter.write_line(f"CI artifact: {shot} (screenshot from a browser test)")


#: the modules that start warm `titjudge` children (tests/cli_process.py) import it by name
_WARM_CHILDREN = re.compile(r"^\s*(from cli_process import|import cli_process)", re.MULTILINE)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile`, with one change: every test module that starts warm `titjudge`
    children goes to one worker. Each worker that starts a child first starts a forkserver
    that imports litellm, LangGraph and titjudge (about 5 s of CPU); with the children's
    modules in one unit, one worker pays that, not both. Found by reading the files, as the
    controller collects no test: a module that imports `cli_process` joins the unit."""
    from xdist.scheduler import LoadFileScheduling

    warm: dict[str, bool] = {}

    def uses_children(module: str) -> bool:
        if module not in warm:
            path = Path(config.rootpath, module)
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
            warm[module] = module != "tests/conftest.py" and bool(_WARM_CHILDREN.search(text))
        return warm[module]

    class WarmChildrenTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "warm titjudge children" if uses_children(module) else module

    return WarmChildrenTogether(config, log)
