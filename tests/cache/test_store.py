import multiprocessing

import pytest

from titjudge.cache.store import CallCache


def _writer(directory: str, start: int) -> None:
    cache = CallCache(directory)
    for i in range(start, start + 200):
        cache.set(f"k{i}", {"text": f"v{i}"}, "m")
    cache.close()


def test_only_stored_values_hit_and_stats_count(tmp_path):
    cache = CallCache(tmp_path)
    assert cache.get("k") is None
    cache.set("k", {"text": "v"}, "litellm:a")
    assert cache.get("k") == {"text": "v"}
    assert cache.stats.writes == {"litellm:a": 1}
    cache.save_run_stats("r", {"calls": 2, "hits": 1, "misses": 1, "writes": 1})
    saved = CallCache(tmp_path).last_run_stats()
    assert (saved["run"], saved["calls"], saved["hits"], saved["misses"]) == ("r", 2, 1, 1)


def test_clear_one_model(tmp_path):
    cache = CallCache(tmp_path)
    cache.set("a", 1, "litellm:a")
    cache.set("b", 2, "litellm:b")
    assert cache.models() == {"litellm:a": 1, "litellm:b": 1}
    assert cache.clear("litellm:a") == 1
    assert cache.get("a") is None and cache.get("b") == 2


@pytest.mark.slow
def test_concurrent_processes_share_one_dir(tmp_path):
    ctx = multiprocessing.get_context("fork")  # the store is imported here already
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), i * 200)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = CallCache(tmp_path)
    assert len(cache) == 600
    assert all(cache.get(f"k{i}") == {"text": f"v{i}"} for i in range(600))


def test_disabled_cache_keeps_nothing():
    cache = CallCache(None)
    cache.set("k", 1, "m")
    assert cache.get("k") is None and len(cache) == 0


def test_an_answer_stored_with_its_claim_released_leaves_no_claim(tmp_path):
    """`set(..., release_claim=True)`: the answer in, this run's claim out, in one write."""
    from titjudge.cache.store import CallCache

    cache = CallCache(tmp_path / "cache")
    assert cache.claim("k", ttl=60)
    cache.set("k", {"text": "a cat"}, "m", release_claim=True)
    assert cache.peek("claim:k") is None
    assert cache.get("k") == {"text": "a cat"}
    assert cache.claim("k", ttl=60)  # free to take again: nothing of the old claim is left
    cache.set("other", {"text": "kept"}, "m")  # without it, a claim held stays held
    assert cache.peek("claim:k") is not None
    cache.close()
