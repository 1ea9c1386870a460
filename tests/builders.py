"""Config builders shared by the test packages (imported by name: `builders`, tests/ is on
sys.path): the config of a `titjudge run` (or of a `titjudge ablate` grid) on a SYNTHETIC
benchmark folder (the `synthetic` / `synth_data` fixtures of tests/conftest.py), with its
cache and runs under a test's tmp dir and its models at the loopback server (tests/doubles),
and writing a config to a file. A test adds its own specifics on top of what these return."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: the `synthetic` fixture (tests/conftest.py): (n_prompts, n_models, seed=0, image_size=256)
#: -> the folder of that SYNTHETIC benchmark
Synthetic = Callable[..., Path]

#: the loopback server's describer (VLM), LLM judge and served embedding model
LOOPBACK_VLM = "litellm:openai/vlm"
LOOPBACK_JUDGE = "litellm:openai/judge"
SERVED_EMBEDDER = "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B"


def data_section(data: Path, *, human_pairs: bool = True, ranks: bool = False) -> dict[str, str]:
    """The `data` section naming the files of the synthetic benchmark in the folder `data`.

    human_pairs: name its pairs.csv (data.human_pairs).
    ranks: name its ranks.csv (data.ranks).
    """
    section = {"manifest": str(data / "manifest.jsonl")}
    if human_pairs:
        section["human_pairs"] = str(data / "pairs.csv")
    if ranks:
        section["ranks"] = str(data / "ranks.csv")
    return section


def loopback(
    url: str, *, backoff_initial: float = 0.01, max_attempts: int = 3, **options: Any
) -> dict[str, Any]:
    """The options of a model called through litellm at the loopback server, fast to retry.

    url: the server's base URL (api_base).
    backoff_initial: seconds before the first retry.
    max_attempts: calls at most per request.
    options: more model options (e.g. timeout, backoff_max), added last.
    """
    return {
        "api_base": url,
        "backoff_initial": backoff_initial,
        "max_attempts": max_attempts,
        **options,
    }


def llm_judge(
    url: str, name: str = "tit_llm", *, model: str = LOOPBACK_JUDGE, **options: Any
) -> dict[str, Any]:
    """An LLM judge at the loopback server.

    url: the server's base URL.
    name: the judge's name.
    model: its model.
    options: `loopback` options (max_attempts, backoff_initial, timeout, ...).
    """
    return {"name": name, "kind": "llm", "model": model, **loopback(url, **options)}


def lexical(name: str = "lexical") -> dict[str, str]:
    """The lexical judge (no model).

    name: the judge's name.
    """
    return {"name": name, "kind": "lexical"}


def closed_url() -> str:
    """A loopback base URL nothing listens on: every connection is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def dead_judge_config(
    data: Path, tmp: Path, url: str, *, name: str = "dead-judge", stop_after: int = 3
) -> dict[str, Any]:
    """Issue 48's case: descriptions replayed from `data`, an LLM judge `tit_llm` at `url` (a
    dead endpoint: `closed_url`, or a server that refuses every call) falling back to
    `lexical`, as the shipped Gemini and vLLM configs set it, and `lexical` itself.

    data: the benchmark folder.
    tmp: the folder for the cache and the runs.
    url: the judge's base URL.
    name: the config's name.
    stop_after: run.stop_after, the failed requests in a row that stop the judge's model.
    """
    judge = {**llm_judge(url, max_attempts=2), "fallback": "lexical"}
    return {
        "name": name,
        "data": data_section(data),
        "describer": replay_describer(data),
        "judges": [judge, lexical()],
        "run": run_section(tmp, stop_after=stop_after),
    }


def replay_describer(descriptions: Path) -> dict[str, str]:
    """A describer that replays stored descriptions: no server, no model.

    descriptions: a benchmark folder (its descriptions.jsonl) or a descriptions file.
    """
    path = descriptions / "descriptions.jsonl" if descriptions.is_dir() else descriptions
    return {"model": f"replay:{path}"}


def served_embedder(
    url: str, name: str = "tit_embed", *, model: str = SERVED_EMBEDDER, **options: Any
) -> dict[str, Any]:
    """An embedding judge whose model is served at the loopback server (api_base only).

    url: the server's base URL.
    name: the judge's name.
    model: its model.
    options: more judge options (batch_size, backoff_initial, max_attempts, batch, ...).
    """
    return {"name": name, "kind": "embedding", "model": model, "api_base": url, **options}


def run_section(tmp: Path, *, concurrency: int | None = 8, **run: Any) -> dict[str, Any]:
    """The `run` section: cache in `tmp`/cache, runs under `tmp`/runs.

    tmp: the folder for the cache and the runs.
    concurrency: run.concurrency (None: left out, titjudge's default).
    run: more run options (budget_usd, ...), added last.
    """
    section: dict[str, Any] = {"cache_dir": str(tmp / "cache"), "out": str(tmp / "runs")}
    if concurrency is not None:
        section["concurrency"] = concurrency
    return {**section, **run}


def run_config(
    data: Path,
    tmp: Path,
    *,
    url: str | None = None,
    name: str = "e2e",
    describer: dict[str, Any] | None = None,
    judges: list[dict[str, Any]] | None = None,
    describer_model: str = LOOPBACK_VLM,
    judge_model: str = LOOPBACK_JUDGE,
    max_attempts: int = 3,
    model_options: dict[str, Any] | None = None,
    api_judges: bool = False,
    batch: bool | None = None,
    human_pairs: bool = True,
    concurrency: int | None = 8,
    **run: Any,
) -> dict[str, Any]:
    """The config of a `titjudge run` on the synthetic benchmark in `data`.

    data: the benchmark folder (manifest.jsonl, pairs.csv, descriptions.jsonl).
    tmp: the folder for the cache (`tmp`/cache) and the runs (`tmp`/runs).
    url: the loopback server's base URL (None: no server, see describer and judges).
    name: the config's name (runs go to `tmp`/runs/`name`).
    describer: the describer section (None: `describer_model` at `url`, else replayed).
    judges: the judges (None: an LLM judge `tit_llm` at `url` and `lexical`, else `lexical`).
    describer_model: the default describer's model.
    judge_model: the default LLM judge's model.
    max_attempts: max_attempts of the default describer and judge (and of `api_judges`).
    model_options: more `loopback` options of the default describer and judge.
    api_judges: give each given `litellm:` judge the `loopback` options (its own keys win).
    batch: set `batch` (with `batch_poll: 0.05`) on the describer and the first judge.
    human_pairs: name the benchmark's pairs.csv.
    concurrency: run.concurrency (None: left out, titjudge's default).
    run: more run options (budget_usd, ...).
    """
    api = loopback(url, max_attempts=max_attempts, **(model_options or {})) if url else {}
    if describer is None:
        describer = {"model": describer_model, **api} if url else replay_describer(data)
    if judges is None:
        judges = (
            [llm_judge(url, model=judge_model, max_attempts=max_attempts, **(model_options or {}))]
            if url
            else []
        )
        judges.append(lexical())
    elif api_judges:
        judges = [{**api, **j} if j.get("model", "").startswith("litellm:") else j for j in judges]
    config = {
        "name": name,
        "data": data_section(data, human_pairs=human_pairs),
        "describer": describer,
        "judges": judges,
        "run": run_section(tmp, concurrency=concurrency, **run),
    }
    if batch is not None:
        for section in (config["describer"], config["judges"][0]):
            section["batch"] = batch
            section["batch_poll"] = 0.05
    return config


def grid_config(
    data: Path,
    tmp: Path,
    *,
    describers: list[dict[str, Any]],
    comparers: list[dict[str, Any]],
    name: str = "grid",
    ranks: bool = False,
    concurrency: int | None = 8,
) -> dict[str, Any]:
    """The config of a `titjudge ablate` grid on the synthetic benchmark in `data`, no bootstrap.

    data: the benchmark folder.
    tmp: the folder for the cache (`tmp`/cache) and the runs (`tmp`/runs).
    describers: the grid's rows.
    comparers: the grid's columns.
    name: the config's name.
    ranks: name the benchmark's ranks.csv too.
    concurrency: run.concurrency (None: left out).
    """
    return {
        "name": name,
        "data": data_section(data, ranks=ranks),
        "describers": describers,
        "comparers": comparers,
        "run": run_section(tmp, concurrency=concurrency),
        "bootstrap": 0,
    }


def write_config(config: dict[str, Any] | str, where: Path, name: str = "run.yaml") -> Path:
    """Write a config as JSON (JSON is YAML) and return its path.

    config: the config (a dict), or a config's text written as it is.
    where: the file, or an existing folder to write `name` in.
    name: the file's name when `where` is a folder.
    """
    path = where / name if where.is_dir() else where
    path.write_text(config if isinstance(config, str) else json.dumps(config), encoding="utf-8")
    return path


def copy_data(data: Path, into: Path) -> Path:
    """A private copy of the benchmark folder `data`, as `into`/data, that a test may change.

    data: the benchmark folder.
    into: the folder to copy it in (a test's tmp_path).
    """
    target = into / "data"
    shutil.copytree(data, target)
    return target
