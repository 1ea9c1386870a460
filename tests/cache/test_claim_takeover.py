"""A claim whose owner died (a killed run) is taken over by exactly one of the runs that find
it at once: the look at the owner and the take-over are one transaction (`CallCache.claim`).
Batch ledgers rely on it: two runs that both took a model's ledger would both create jobs."""

import multiprocessing
import socket
import subprocess
import sys

import pytest

from titjudge.cache.store import CallCache

RUNS = 8


def _dead_pid() -> int:
    """The pid of a process that has ended (reaped), on this host."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def _race(directory: str, key: str, start, done, results) -> None:
    import time

    from titjudge.cache import store

    alive = store._alive

    def slow_alive(owner):  # a slow look at the owner widens the window between the runs
        time.sleep(0.2)
        return alive(owner)

    store._alive = slow_alive
    cache = CallCache(directory)
    start.wait()
    results.put(cache.claim(key, 3600.0))
    done.wait()  # stay alive until every run has looked: a live winner is a live owner


@pytest.mark.slow
def test_a_dead_owners_claim_goes_to_exactly_one_run(tmp_path):
    key = "batch-ledger:litellm:openai/m "
    cache = CallCache(tmp_path / "cache")
    cache._store.set(f"claim:{key}", [socket.gethostname(), _dead_pid()], expire=3600)
    cache.close()
    # forked from this process, which has imported the store already (spawn started 8 fresh
    # interpreters to import it); nothing in a run needs a lock another thread here may hold
    context = multiprocessing.get_context("fork")
    start, done = context.Barrier(RUNS), context.Barrier(RUNS + 1)
    results = context.Queue()
    runs = [
        context.Process(target=_race, args=(str(tmp_path / "cache"), key, start, done, results))
        for _ in range(RUNS)
    ]
    for run in runs:
        run.start()
    won = [results.get(timeout=60) for _ in runs]
    done.wait()
    for run in runs:
        run.join(timeout=60)
    assert won.count(True) == 1
