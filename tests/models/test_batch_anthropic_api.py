"""`AnthropicBatchAPI` against the loopback Message Batches double (doubles.anthropic_batch_server):
creation, the `find` heuristic a killed run resumes by, statuses, results, per-line outcomes and
the API's errors as the call layer's transient or permanent errors."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from doubles.anthropic_batch_server import AnthropicBatchServer, Plan
from doubles.batch_tls import one_root_bundle
from doubles.server import build_responder

from titjudge.models.core.base import PermanentError, TransientError
from titjudge.models.core.batch import JobState
from titjudge.models.litellm.batch import anthropic as batch_anthropic
from titjudge.models.litellm.batch.anthropic import AnthropicBatchAPI
from titjudge.models.litellm.batch.site import BatchSite

KEY = "sk-ant-unit-test-key-0123456789"


@pytest.fixture(scope="module", autouse=True)
def _one_root(tmp_path_factory):
    """Each request builds an httpx client: its TLS context loads one root, not ~150."""
    with one_root_bundle(tmp_path_factory.mktemp("tls")):
        yield


@pytest.fixture
def server():
    with AnthropicBatchServer(build_responder("echo")) as srv:
        yield srv


def _api(server: AnthropicBatchServer, key: str | None = KEY) -> AnthropicBatchAPI:
    return AnthropicBatchAPI(
        BatchSite(None, "anthropic", "claude-sonnet-4-5", server.url, key, 10.0)
    )  # type: ignore[arg-type]


def _data(n: int, start: int = 0, custom_id: str | None = None) -> bytes:
    lines = [
        {
            "custom_id": custom_id or f"tj-{i:04d}",
            "params": {
                "model": "claude-sonnet-4-5",
                "max_tokens": 64,
                "messages": [{"role": "user", "content": f"line {i}"}],
            },
        }
        for i in range(start, start + n)
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_batch_is_created_inline_and_read_back_by_custom_id(server):
    api = _api(server)
    assert api.uploads is False and api.max_requests == 100_000
    assert api.max_bytes == 256 * 1024 * 1024
    server.plan(Plan(fail={1: "messages: text content blocks must be non-empty"}))
    batch_id = _run(api.create(None, _data(3), {"titjudge_job": "ignored"}))
    assert server.keys == {KEY} and len(server.creates[0]["requests"]) == 3
    state = _run(api.retrieve(batch_id))
    assert (state.status, state.total, state.completed, state.failed) == ("completed", 3, 2, 1)
    rows = {row["custom_id"]: api.parse(row) for row in _run(api.results(state))}
    assert rows["tj-0000"].generation is not None and rows["tj-0000"].generation.text == "line 0"
    assert rows["tj-0001"].error == (
        "batch line failed: invalid_request_error: messages: text content blocks must be non-empty"
    )
    assert not rows["tj-0001"].unfinished


def test_a_batch_in_progress_is_not_done_and_expired_lines_are_unfinished(server):
    api = _api(server)
    server.hold()
    batch_id = _run(api.create(None, _data(4), {}))
    state = _run(api.retrieve(batch_id))
    assert state.status == "in_progress" and not state.done and state.output_file_id is None
    assert _run(api.results(state)) == []
    server.batches[batch_id]["_plan"] = Plan(expire_after=1)
    server.release()
    state = _run(api.retrieve(batch_id))
    assert state.status == "expired" and state.done and state.completed == 1
    parsed = [api.parse(row) for row in _run(api.results(state))]
    assert [p.unfinished for p in parsed] == [False, True, True, True]
    assert parsed[1].error == "batch line expired: the batch ended before it ran"


def test_line_outcomes_the_collector_reads():
    api = AnthropicBatchAPI(BatchSite(None, "anthropic", "m", "http://127.0.0.1:9", KEY, 1.0))  # type: ignore[arg-type]
    canceled = api.parse({"custom_id": "a", "result": {"type": "canceled"}})
    assert canceled.unfinished and canceled.generation is None
    errored = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    failed = api.parse({"custom_id": "b", "result": {"type": "errored", "error": errored}})
    assert failed.error == "batch line failed: overloaded_error: Overloaded"
    odd = api.parse({"custom_id": "c", "result": {"type": "pending"}})
    assert odd.error == "batch line: unknown result type 'pending'" and not odd.unfinished
    broken = api.parse({"custom_id": "d", "result": {"type": "succeeded", "message": {}}})
    assert broken.generation is None and broken.error.startswith("batch line unreadable")


def _find(api: AnthropicBatchAPI, since: float, lines: int, monkeypatch) -> str | None:
    """`find` as a re-run's process asks it (the batches made here are not its own)."""
    monkeypatch.setattr(batch_anthropic, "TAKEN", set())
    return _run(api.find({"titjudge_job": "x"}, since, lines))


def test_find_adopts_the_listed_batch_of_that_size_created_after_the_creation(server, monkeypatch):
    """Anthropic keeps no metadata: a killed run's batch is the one listed with as many
    requests, created at or after the time its creation was asked (less the clock skew)."""
    api = _api(server)
    server.hold()
    before = time.time()
    ours = _run(api.create(None, _data(5), {}))
    for size in (3, 4, 6):  # batches of other sizes, created later
        _run(api.create(None, _data(size), {}))
    assert _find(api, before, 5, monkeypatch) == ours
    assert _find(api, before, 7, monkeypatch) is None  # no batch of that size
    later = time.time() + batch_anthropic.CLOCK_SKEW + 5
    assert _find(api, later, 5, monkeypatch) is None  # created before the creation was asked
    # the list is read page by page (the newest first) until it is older than asked
    monkeypatch.setattr(batch_anthropic, "LIST_LIMIT", 2)
    assert _find(api, before, 5, monkeypatch) == ours
    # two of that size: the first created after the time asked
    second = _run(api.create(None, _data(5, start=10), {}))
    assert _find(api, before, 5, monkeypatch) == ours
    assert second != ours


def test_two_jobs_cut_short_never_adopt_the_same_batch(server, monkeypatch):
    """Two models' jobs of one size, both killed while being created: the re-run's two
    looks adopt two batches, never the same one twice, nor one this process made."""
    api = _api(server)
    server.hold()
    before = time.time()
    first = _run(api.create(None, _data(4), {}))
    second = _run(api.create(None, _data(4, start=10), {}))
    monkeypatch.setattr(batch_anthropic, "TAKEN", set())  # the re-run's process

    async def both() -> list[str | None]:
        return list(
            await asyncio.gather(
                api.find({"titjudge_job": "a"}, before, 4),
                api.find({"titjudge_job": "b"}, before, 4),
            )
        )

    assert sorted(_run(both())) == sorted([first, second])
    assert _run(api.find({"titjudge_job": "c"}, before, 4)) is None  # both taken
    made = _run(api.create(None, _data(4, start=20), {}))  # made here: never adopted
    assert _run(api.find({"titjudge_job": "d"}, before, 4)) is None
    assert made not in (first, second)


def test_custom_ids_outside_the_documented_pattern_are_refused(server):
    with pytest.raises(PermanentError) as refused:
        _run(_api(server).create(None, _data(1, custom_id="tj.not/allowed"), {}))
    message = str(refused.value)
    assert "HTTP 400 invalid_request_error: requests.0.custom_id" in message
    assert "^[a-zA-Z0-9_-]{1,64}$" in message
    assert server.creates == []


def test_the_apis_errors_are_transient_or_permanent(server, monkeypatch):
    api = _api(server)
    batch_id = _run(api.create(None, _data(1), {}))
    server.poll_failures = 1
    with pytest.raises(TransientError, match="HTTP 500 api_error: Internal server error"):
        _run(api.retrieve(batch_id))
    with pytest.raises(PermanentError, match="HTTP 404 not_found_error"):
        _run(api.retrieve("msgbatch_nope"))
    server.key = KEY
    with pytest.raises(PermanentError, match="HTTP 401 authentication_error") as refused:
        _run(_api(server, key="sk-ant-another-key-0123456789").retrieve(batch_id))
    assert refused.value.lasting is not None
    assert "sk-ant-another-key-0123456789" not in str(refused.value)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(PermanentError, match="ANTHROPIC_API_KEY"):
        _run(_api(server, key=None).retrieve(batch_id))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert _run(_api(server, key=None).retrieve(batch_id)).done
    closed = AnthropicBatchAPI(BatchSite(None, "anthropic", "m", "http://127.0.0.1:9", KEY, 2.0))  # type: ignore[arg-type]
    with pytest.raises(TransientError, match="connection failed"):
        _run(closed.retrieve(batch_id))


def test_results_are_read_from_the_configured_endpoint_only(server):
    """A results_url on another host is read at the same path on the configured endpoint: the
    key never goes to a host it was not configured for."""
    api = _api(server)
    state = _run(api.retrieve(_run(api.create(None, _data(2), {}))))
    elsewhere = state.output_file_id.replace(server.url, "https://elsewhere.invalid")
    rows = _run(api.results(JobState("completed", output_file_id=elsewhere)))
    assert sorted(row["custom_id"] for row in rows) == ["tj-0000", "tj-0001"]


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/messages"])
def test_the_batches_endpoint_follows_api_base_as_litellm_takes_it(server, suffix):
    """api_base as the online call takes it: the root, or with /v1 or /v1/messages."""
    api = AnthropicBatchAPI(BatchSite(None, "anthropic", "m", server.url + suffix, KEY, 10.0))  # type: ignore[arg-type]
    assert _run(api.retrieve(_run(api.create(None, _data(1), {})))).done


def test_without_api_base_the_environments_base_is_used(server, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_BASE", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url + "/")
    api = AnthropicBatchAPI(BatchSite(None, "anthropic", "m", None, KEY, 10.0))  # type: ignore[arg-type]
    _run(api.create(None, _data(1), {}))
    assert server.batch_creates == 1


def test_the_docs_state_the_find_windows_clock_skew():
    readme = (Path(__file__).resolve().parents[2] / "docs" / "cost-and-batch.md").read_text()
    assert f"created no earlier than {batch_anthropic.CLOCK_SKEW:.0f} s" in readme
