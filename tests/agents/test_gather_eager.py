"""`gather_eager`, how both item paths gather an item's judges: concurrent like
`asyncio.gather` where the judges wait, and no task at all where none does (a cached item)."""

import asyncio
import time
import warnings

import pytest

from titjudge.agents.gather import gather_eager


async def answered(value):
    return value


async def waits(value, seconds, log=None):
    if log is not None:
        log.append(f"start {value}")
    await asyncio.sleep(seconds)
    return value


async def fails_at_once():
    raise KeyError("at once")


async def fails_later():
    await asyncio.sleep(0.01)
    raise KeyError("later")


def tasks_made(body):
    """(body's result, how many tasks were created while it ran)."""
    made = []

    async def main():
        loop = asyncio.get_running_loop()
        default = loop.get_task_factory()

        def factory(loop, coro, **kwargs):
            made.append(coro)
            if default is not None:
                return default(loop, coro, **kwargs)
            return asyncio.Task(coro, loop=loop, **kwargs)

        loop.set_task_factory(factory)
        found = await body()
        return found, len(made)  # not counting asyncio.run's own, after

    return asyncio.run(main())


def test_coroutines_that_never_wait_make_no_task():
    found, made = tasks_made(lambda: gather_eager(answered(k) for k in range(6)))
    assert found == list(range(6)) and made == 0
    # asyncio.gather, for comparison: one task each
    assert tasks_made(lambda: asyncio.gather(*(answered(k) for k in range(6))))[1] == 6


def test_waiting_coroutines_run_concurrently_in_order_of_start_with_results_in_order():
    log: list[str] = []

    async def body():
        return await gather_eager(
            [waits("a", 0.3, log), answered("b"), waits("c", 0.3, log), answered("d")]
        )

    started = time.perf_counter()
    found, made = tasks_made(body)
    assert found == ["a", "b", "c", "d"]
    assert time.perf_counter() - started < 0.55  # together, not one after the other
    assert log == ["start a", "start c"] and made == 2  # a task only for those that waited


@pytest.mark.parametrize("failing", [fails_at_once, fails_later])
def test_the_first_error_propagates_and_nothing_is_left_running_or_unawaited(failing):
    finished: list[str] = []

    async def slow():
        await asyncio.sleep(0.5)
        finished.append("slow")

    async def body():
        with pytest.raises(KeyError):
            await gather_eager([slow(), failing(), answered("never started")])
        await asyncio.sleep(0.6)
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited would warn
        left, _ = tasks_made(body)
    assert left == [] and finished == []  # the slow sibling was cancelled


def test_cancelling_the_gather_cancels_what_is_waiting():
    async def body():
        gathered = asyncio.ensure_future(gather_eager([waits(1, 5), waits(2, 5)]))
        await asyncio.sleep(0.05)
        gathered.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gathered
        await asyncio.sleep(0)
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert tasks_made(body)[0] == []
