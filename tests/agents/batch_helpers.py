"""What the `batch: true` tests (tests/agents/test_batch*.py) share: their benchmark and
environment, writing a run config, reading the run's record, waiting on a `titjudge run`
child process, and reading or rewriting the batch ledger in the cache dir
(`models.calls.batch.ledger`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import builders
import pytest
from cli_process import CliProcess
from doubles.batch_tls import one_root_bundle
from run_dirs import latest_run

#: the batch runs' SYNTHETIC benchmark: 2 prompts x 4 models. Every line costs litellm's
#: raw-request build and an answer from the double; what the tests claim (a job per role,
#: lines sent again after an expiry, split at a limit, half the online price) holds for any
#: number of items, so they use half the 16 of the shared `synth_data`
N_PROMPTS, N_MODELS = 2, 4
N_ITEMS = N_PROMPTS * N_MODELS


@contextmanager
def batch_env(factory: pytest.TempPathFactory, synthetic: builders.Synthetic) -> Iterator[Path]:
    """The batch tests' benchmark (`synthetic(N_PROMPTS, N_MODELS)`, made once per session),
    with SSL_CERT_FILE naming a CA bundle of one root while the context lasts
    (`doubles.batch_tls`: a test module's autouse fixture)."""
    with one_root_bundle(factory.mktemp("tls")):
        yield synthetic(N_PROMPTS, N_MODELS)


def write_config(config: dict[str, Any], tmp_path: Path) -> str:
    """`builders.write_config` as `tmp_path`/run.json: the path, as the CLI's argument."""
    return str(builders.write_config(config, tmp_path, "run.json"))


def run_ok(config: dict[str, Any], tmp_path: Path) -> None:
    """`titjudge run` of `config` (written into `tmp_path`) in this process; it must exit 0."""
    from titjudge.cli import main

    assert main(["run", write_config(config, tmp_path)]) == 0


def online_reruns(
    config: Callable[[Path, bool], dict[str, Any]], tmp: Path, seen: Callable[[Path], Any]
) -> tuple[Any, Any]:
    """After a batch run whose cache and runs are under tmp/batch: the config run online on that
    cache, then online on a cache of its own (tmp/online); what `seen` reads after each.

    config: (out folder, batch?) -> the run config.
    seen: out folder -> what the server and the run dir show of the run just made there.
    """
    run_ok(config(tmp / "batch", False), tmp)
    rerun = seen(tmp / "batch")
    run_ok(config(tmp / "online", False), tmp)
    return rerun, seen(tmp / "online")


def run_dir(tmp_path: Path) -> Path:
    """The latest run of the `e2e` config under `tmp_path/runs`."""
    return latest_run(tmp_path / "runs" / "e2e")


def summary(tmp_path: Path) -> dict[str, Any]:
    return json.loads((run_dir(tmp_path) / "summary.json").read_text())


def wait_for(predicate: Callable[[], bool], proc: CliProcess, timeout: float = 60.0) -> None:
    """Until `predicate()` holds, while the run `proc` is still going."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "the double never saw it"
        time.sleep(0.02)


def ledger_text(directory: Path) -> str:
    return "".join(p.read_text() for p in directory.glob("*.json")) if directory.exists() else ""


def forget_job_id(directory: Path) -> None:
    """The ledger as a run killed while creating its job leaves it: the job's id unknown."""
    (path,) = directory.glob("*.json")
    raw = json.loads(path.read_text())
    for job in raw["jobs"]:
        job["state"], job["job_id"] = "creating", None
    path.write_text(json.dumps(raw))


def jobs_by_model(server: Any) -> dict[str, dict[str, int]]:
    """The OpenAI batch double's own count (`doubles.batch_server.BatchServer`), per model its
    lines' bodies name: the jobs created, the requests in them (`request_counts.total`) and
    those it answered (`request_counts.completed`), as the Batch objects say."""
    found: dict[str, dict[str, int]] = {}
    for batch in server.batches.values():
        first = server.contents[batch["input_file_id"]].decode().splitlines()[0]
        counts = batch["request_counts"]
        entry = found.setdefault(
            json.loads(first)["body"]["model"], {"jobs": 0, "requests": 0, "answered": 0}
        )
        entry["jobs"] += 1
        entry["requests"] += counts["total"]
        entry["answered"] += counts["completed"]
    return found
