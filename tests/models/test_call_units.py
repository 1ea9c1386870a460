"""The call pipeline's units, each alone: in-process dedup (`models.calls.sharing.dedup`),
cross-process claims on a real cache dir (`models.calls.sharing.claims`) and what a run already has
for a call (`models.calls.sharing.run_answers`). The pipeline that puts them in order
(`models.calls.pipeline`) is tested through the clients that use it (tests/models/, the run
tests): dedup across items, failures shared within a run, two runs on one cache."""

from __future__ import annotations

import asyncio
import sys

import pytest

from titjudge.cache.store import CallCache
from titjudge.models.calls.probe import CacheProbe
from titjudge.models.calls.sharing.claims import Claims
from titjudge.models.calls.sharing.dedup import InFlight
from titjudge.models.calls.sharing.run_answers import RunAnswers
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.records.calls import CallResult


def ok(value: str) -> CallResult[str]:
    return CallResult(ok=True, value=value)


# ------------------------------------------------------------------ dedup


def test_a_key_in_flight_is_waited_on_and_repeats_within_a_call_share_the_first():
    async def go() -> None:
        book = InFlight()
        first = book.share(["a", "b", "a"])
        assert first.owned == {"a": [0, 2], "b": [1]} and first.waiting == {}
        second = book.share(["b", "c"])
        assert list(second.owned) == ["c"] and list(second.waiting) == [0]
        first.settle("b", ok("B"))  # reaches the waiter at once, before "a" is answered
        assert (await second.waiting[0]).value == "B"
        assert "b" not in book and "a" in book
        first.settle("a", ok("A"))
        first.close()
        second.close()
        assert "a" not in book and "c" not in book

    asyncio.run(go())


def test_a_call_that_fails_as_a_whole_hands_its_error_to_every_waiter():
    async def go() -> None:
        book = InFlight()
        owner = book.share(["k"])
        waiter = book.share(["k"])
        owner.abandon(RuntimeError("cache dir unusable"))
        owner.close()
        with pytest.raises(RuntimeError, match="cache dir unusable"):
            await waiter.waiting[0]
        again = book.share(["k"])  # nothing stays in flight: the next call asks afresh
        assert list(again.owned) == ["k"]

    asyncio.run(go())


# ------------------------------------------------------------------ claims


#: another run: a process of its own that claims `key` in the cache dir, says so, then on
#: its stdin's "store" stores an answer and releases, on "drop" releases without one
OTHER_RUN = """
import sys
from titjudge.cache.store import CallCache
cache = CallCache(sys.argv[1])
print("held" if cache.claim("key", 60.0) else "refused", flush=True)
if sys.stdin.readline().strip() == "store":
    cache.set("key", "the answer", "m")
cache.release("key")
print("released", flush=True)
"""


async def _other_run(directory):
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        OTHER_RUN,
        str(directory),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert (await child.stdout.readline()).strip() == b"held"
    return child


async def _then(child, word):
    await asyncio.sleep(0.05)
    child.stdin.write(f"{word}\n".encode())
    await child.stdin.drain()
    assert (await child.stdout.readline()).strip() == b"released"
    await child.wait()


def _accept(entry):
    return None if entry is None else ok(entry)


@pytest.mark.slow  # a second process
@pytest.mark.parametrize(
    ("then", "waited_for"),
    [("store", "the answer"), ("drop", None)],
    ids=["stored-answer-is-taken", "let-go-claim-is-free"],
)
def test_a_claim_held_by_another_run_is_waited_on_until_it_answers_or_lets_go(
    tmp_path, then, waited_for
):
    """The other run stores an answer: the waiter takes it. It lets the claim go without one:
    the waiter gets none, and the key is free to take."""

    async def go():
        claims = Claims(CallCache(tmp_path), ModelOptions(), lambda: True, poll=0.01)
        child = await _other_run(tmp_path)
        assert not claims.take("key")
        waited, _ = await asyncio.gather(claims.wait("key", _accept), _then(child, then))
        return waited, claims.take("key")

    waited, free = asyncio.run(go())
    assert (None if waited is None else waited.value) == waited_for
    assert free  # released either way


def test_an_uncached_backend_claims_nothing(tmp_path):
    cache = CallCache(tmp_path)
    claims = Claims(cache, ModelOptions(), lambda: False)
    assert claims.take("key") and claims.take("key")  # no claim is written
    assert Claims(cache, ModelOptions(), lambda: True).take("key")


# ------------------------------------------------------------------ what the run has


def test_a_failure_of_this_run_is_shared_marked_cached_and_never_for_another_key():
    answers = RunAnswers()
    failed = CallResult(ok=False, error="HTTP 500 from the server", attempts=3)
    answers.keep_failure("shared-1", failed)
    found = answers.find("key-1", "shared-1", probe=SEND)
    assert found is not None and found.error == failed.error and found.cached
    assert answers.find("key-2", "shared-2", probe=SEND) is None
    assert answers.find("key-1", "shared-1", probe=SEND) is not None  # every later asker shares it


def test_a_batch_answer_is_handed_over_once_and_a_batch_failure_stays():
    answers = RunAnswers()
    answers.keep_batch("good", ok("yes"))
    answers.keep_batch("bad", CallResult(ok=False, error="batch line failed"))
    assert answers.find("good", "s1", probe=SEND).value == "yes"
    assert answers.find("good", "s1", probe=SEND) is None  # counted once; the cache answers next
    assert answers.find("bad", "s2", probe=SEND).error == "batch line failed"
    assert answers.find("bad", "s2", probe=SEND).error == "batch line failed"


def test_under_a_probe_a_batch_answer_is_handed_over_only_when_it_commits():
    answers = RunAnswers()
    answers.keep_batch("good", ok("yes"))
    probe = CacheProbe()
    assert answers.find("good", "s", probe=probe).value == "yes"
    assert answers.find("good", "s", probe=probe).value == "yes"  # not committed: still there
    probe.commit()
    assert answers.find("good", "s", probe=SEND) is None
