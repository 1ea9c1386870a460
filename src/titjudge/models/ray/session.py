"""The process's connection to Ray: joined on the first model that needs it, left at the end.

Where the cluster is: `run.execution.address` when given, else `RAY_ADDRESS` when set
(`ray.init(address="auto")` reads it), else a local Ray instance started here with
`run.execution.num_cpus` CPUs. Only a local instance started here is shut down when the run
ends (`release`); a cluster that was already there, or a `ray.init` the caller made
itself, is left as it was.

A local instance is started from a thread that lives as long as it does: Ray's own
processes (GCS, raylet) are tied to the thread that started them (Linux's parent-death
signal is per thread), and the thread that first needs Ray is often a short-lived worker.

Ray's own logs stay off the user's terminal: its logger is set to errors only and the
actors' output is not forwarded (`log_to_driver=False`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from typing import Any

from titjudge.errors import ConfigError, MissingDependencyError, install_hint
from titjudge.models.core.execution import ExecutionOptions
from titjudge.models.local.common import first_line

log = logging.getLogger(__name__)

_LOCK = threading.Lock()


class _Session:
    """How this process is connected: by whom, and the thread holding a local instance."""

    def __init__(self) -> None:
        self.owned = False
        self.stop: threading.Event | None = None
        self.keeper: threading.Thread | None = None


_SESSION = _Session()


def check_installed() -> None:
    """Refuse `execution: ray` without Ray, in one line naming the extra."""
    if importlib.util.find_spec("ray") is None:
        raise MissingDependencyError(
            "run.execution.backend is 'ray', but Ray is not installed; install it with: "
            f"{install_hint('ray')}"
        )


def _init_kwargs() -> dict[str, Any]:
    return {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "configure_logging": True,
    }


def connect(execution: ExecutionOptions) -> str:
    """Join the cluster `execution` names (starting a local one if it names none); returns
    'existing' or 'started' for the run record."""
    check_installed()
    import ray

    with _LOCK:
        if ray.is_initialized():
            return "started" if _SESSION.owned else "existing"
        address = execution.address or ("auto" if os.environ.get("RAY_ADDRESS") else None)
        if address is not None:
            try:
                ray.init(address=address, **_init_kwargs())
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = execution.address or os.environ.get("RAY_ADDRESS")
                raise ConfigError(
                    f"cannot connect to the Ray cluster at {where}: {first_line(exc)}"
                ) from None
            return "existing"
        _start_local(execution.num_cpus)
        return "started"


def _start_local(num_cpus: int | None) -> None:
    """Start a local instance from a keeper thread that stays until `release`."""
    import ray

    started = threading.Event()
    stop = threading.Event()
    failure: list[BaseException] = []

    def keep() -> None:
        try:
            ray.init(num_cpus=num_cpus, **_init_kwargs())
        except BaseException as exc:  # handed to the thread that asked
            failure.append(exc)
            started.set()
            return
        started.set()
        stop.wait()
        ray.shutdown()

    keeper = threading.Thread(target=keep, name="titjudge-ray", daemon=True)
    keeper.start()
    started.wait()
    if failure:
        raise ConfigError(f"cannot start a local Ray instance: {first_line(failure[0])}") from None
    _SESSION.owned, _SESSION.stop, _SESSION.keeper = True, stop, keeper
    log.info("started a local Ray instance (%s CPUs)", num_cpus or "all")


def release() -> None:
    """Shut down the local instance this process started (nothing else is touched)."""
    with _LOCK:
        if not _SESSION.owned:
            return
        assert _SESSION.stop is not None and _SESSION.keeper is not None
        _SESSION.stop.set()
        _SESSION.keeper.join()
        _SESSION.owned, _SESSION.stop, _SESSION.keeper = False, None, None


__all__ = ["check_installed", "connect", "release"]
