"""titjudge: judge how well text-to-image outputs follow long prompts.

    import titjudge
    record = titjudge.evaluate("configs/tit-llm-gemini.yaml", overrides=["run.concurrency=8"])
    record.variants["tit_llm_g"].pairwise_accuracy   # the run's record, typed
    single = titjudge.score("cat.png", "a red cat on a blue mat", config="configs/tit-llm-gemini.yaml")
    run_dir = titjudge.find_run("runs/tit-llm-gemini")   # its latest run: runs/tit-llm-gemini/<run id>
    record = titjudge.load_run("runs/tit-llm-gemini")    # its results: record.variants["tit_llm_g"]
    record.pairs.groupby("variant").correct.mean()        # frames (pandas: the [analysis] extra)
    runs = titjudge.load_runs("runs/*/*")                 # several runs: frames with a `run` column

Heavy dependencies (litellm, torch, transformers) load only when a backend that
needs them is built, so importing this package stays cheap.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from titjudge.submodules import lazy_submodules

# before any import of litellm, wherever in the package it happens (and in code that imports
# litellm after titjudge): litellm's import otherwise fetches its price map from GitHub's main
# branch (seconds of retries offline, and prices that are not the pinned release's)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"

if TYPE_CHECKING:
    from titjudge.config.schema import RunConfig
    from titjudge.report.analysis.record import AnalysedRun
    from titjudge.report.analysis.runset import RunSet
    from titjudge.report.runs import RunEntry
    from titjudge.run.score import SingleScore


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Load and validate a run config (YAML), with `a.b=c` overrides."""
    from titjudge.config.load import load_config as _load

    return _load(path, overrides)


def _as_config(
    config: RunConfig | str | Path | dict[str, Any], overrides: list[str] | None
) -> RunConfig:
    from titjudge.config.load import configured
    from titjudge.config.schema import RunConfig

    if isinstance(config, RunConfig):
        if overrides:
            found: RunConfig = configured(
                config.model_dump(mode="json"), overrides, RunConfig, "config"
            )
            return found
        return config
    if isinstance(config, dict):
        given: RunConfig = configured(config, overrides or [], RunConfig, "config")
        return given
    return load_config(config, overrides)


def evaluate(
    config: RunConfig | str | Path | dict[str, Any],
    *,
    overrides: list[str] | None = None,
    limit: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
) -> AnalysedRun:
    """Describe and judge every manifest item, score against human pairs, write the run dir
    (a new `<run.out>/<name>/<run id>/`, or exactly `out`) and return its record: the one
    `load_run(record.run_dir)` reads back, typed the same (`AnalysedRun`).

    It holds the run's metrics (`record.variants`; none without human pairs), each variant's
    origin (`record.origin(name)`: its share of scores from its fallback, whether its model
    was stopped), its counts (`record.summary`: items, failures, usage, cost, cache, wall
    time, and `record.summary.exit_code`, what `titjudge run` exits with), each pairwise judge's
    verdicts (`record.verdicts`), items.jsonl's typed lines (`record.item_lines`: each
    item's score, status, rationale or error per variant) and its run dir
    (`record.run_dir`); the frames (`record.items`, `.pairs`, `.metrics`) need the
    `analysis` extra.

    Inside a running event loop (Jupyter), use `await titjudge.evaluate_async(...)`.
    """
    from titjudge.report.analysis.record import AnalysedRun
    from titjudge.run.runner import ShowProgress, run

    record = run(
        _as_config(config, overrides),
        limit=limit,
        out=Path(out) if out else None,
        progress=ShowProgress() if progress else None,
    )
    return AnalysedRun.of(record)


async def evaluate_async(
    config: RunConfig | str | Path | dict[str, Any],
    *,
    overrides: list[str] | None = None,
    limit: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
) -> AnalysedRun:
    """`evaluate`, awaited inside a running event loop (a Jupyter notebook)."""
    from titjudge.report.analysis.record import AnalysedRun
    from titjudge.run.runner import ShowProgress, run_async

    record = await run_async(
        _as_config(config, overrides),
        limit=limit,
        out=Path(out) if out else None,
        progress=ShowProgress() if progress else None,
    )
    return AnalysedRun.of(record)


def score(
    image: str | Path, prompt: str, config: RunConfig | str | Path | dict[str, Any] | None = None
) -> SingleScore:
    """Describe one image and run every configured judge on it (default: Gemini 2.5 Pro)."""
    from titjudge.run.score import score as _score

    return _score(image, prompt, _as_config(config, None) if config is not None else None)


def find_run(path: str | Path) -> Path:
    """The run dir `path` means: a `<run.out>/<name>` folder's latest run (the id its LATEST
    file names), or `path` itself when it is a run dir (`<run.out>/<name>/<run id>`, an
    `--out` dir). Anything else raises `titjudge.errors.DataError`."""
    from titjudge.report.runs import resolve_run

    return resolve_run(path)


def load_run(path: str | Path) -> AnalysedRun:
    """A run's results as one typed record (`titjudge.records.run_record.RunRecord`, as the
    `report.analysis.record.AnalysedRun` that adds the frames), read from
    a run dir or a `<run.out>/<name>` folder's latest run: per variant its metrics and
    provenance (`record.variants[name]`) and where its scores came from
    (`record.origin(name)`: `fallback_share`, `stopped`; None for a run that did not record
    it; a variant scored only by its fallback has no metric of its own), run-level facts,
    and each pairwise judge's verdicts (`record.verdicts[name]`). The same record every
    titjudge view reads.

    Its run as pandas DataFrames (pandas: `pip install -e '.[analysis]'`), built when asked
    for: `record.items` (one row per item x variant), `record.pairs` (one row per human pair
    x variant; `pairs.groupby("variant").correct.mean()` is each variant's
    pairwise_accuracy), `record.metrics` (one row per variant); `record.config` is
    config.yaml as a dict, `record.summary` summary.json as a
    `titjudge.records.summary.RunSummary` (None when the run has none)."""
    from titjudge.report.analysis.record import load_analysed_run

    return load_analysed_run(path)


def load_runs(paths: str | Path | list[str | Path]) -> RunSet:
    """Several runs (paths, or a glob such as "runs/demo/*" or "runs/*/*", of whose matches
    the runs are read: a config folder's LATEST file is skipped) read with `load_run`:
    `.items`, `.pairs` and `.metrics` stack their frames with a leading `run` column (the run
    id), `.records` holds each run's record."""
    from titjudge.report.analysis.runset import RunSet

    return RunSet.load(paths)


def list_runs(path: str | Path) -> list[RunEntry]:
    """The runs kept in a `<run.out>/<name>` folder, oldest first; `.latest` marks the one
    LATEST names, `.path` is each run dir."""
    from titjudge.report.runs import list_runs as _list

    return _list(Path(path))


__all__ = [
    "__version__",
    "evaluate",
    "evaluate_async",
    "find_run",
    "list_runs",
    "load_config",
    "load_run",
    "load_runs",
    "score",
]

__getattr__ = lazy_submodules(__name__)
