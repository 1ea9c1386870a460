"""`titjudge cache merge`: runs split over machines, each with a cache of its own, merged into
one cache that answers the whole run again without a request; an answer already in the cache
it is merged into is never overwritten; claims in progress are not answers."""

from __future__ import annotations

import asyncio

import pytest
from cli_process import run_cli
from doubles.server import FakeOpenAIServer

from titjudge.cache.store import CallCache
from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig
from titjudge.data.synth.benchmark import synthesize
from titjudge.run.runner import run_async

KEY = "TITJUDGE_MERGE_TEST_KEY"


def _config(tmp_path, url, manifest, cache, name):
    model = {"model": "litellm:openai/vlm", "api_base": url, "api_key_env": KEY}
    return validate_config(
        {
            "name": name,
            "data": {"manifest": str(manifest)},
            "describer": model,
            "judges": [{"name": "tit_llm", "kind": "llm", **model}],
            "run": {"cache_dir": str(cache), "out": str(tmp_path / "runs")},
        },
        RunConfig,
        name,
    )


def _halves(data):
    """The manifest split by prompt into two files (one per machine)."""
    rows = [line for line in (data / "manifest.jsonl").read_text().splitlines() if line.strip()]
    prompts = sorted({line.split('"prompt_id": "')[1].split('"')[0] for line in rows})
    out = []
    for index, keep in enumerate((prompts[::2], prompts[1::2])):
        path = data / f"half-{index}.jsonl"
        path.write_text("\n".join(r for r in rows if any(f'"{p}"' in r for p in keep)) + "\n")
        out.append(path)
    return out


def test_a_run_split_in_two_caches_merged_answers_a_rerun_with_no_request(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY, "sk-test")
    data = tmp_path / "data"
    synthesize(data, n_prompts=4, n_models=2, seed=0, workers=1)
    halves = _halves(data)
    with FakeOpenAIServer(responder="auto") as server:
        for index, manifest in enumerate(halves):
            config = _config(
                tmp_path, server.url, manifest, tmp_path / f"cache-{index}", f"h{index}"
            )
            record = asyncio.run(run_async(config))
            assert record.summary.failed_items == 0
        sent = server.stats.total
        assert sent == 16  # 8 items, each described and judged once, over both halves
        driver = tmp_path / "driver-cache"
        done = run_cli(
            [
                "cache",
                "merge",
                str(tmp_path / "cache-0"),
                str(tmp_path / "cache-1"),
                "--into",
                str(driver),
            ]
        )
        assert done.returncode == 0, done.stderr
        assert "merged" in done.stdout and "answers added" in done.stdout
        whole = _config(tmp_path, server.url, data / "manifest.jsonl", driver, "whole")
        again = asyncio.run(run_async(whole))
        assert server.stats.total == sent  # not one request more
    assert again.summary.items == 8 and again.summary.failed_items == 0


def test_an_answer_already_there_stands_and_claims_stay_behind(tmp_path):
    source, target = CallCache(tmp_path / "a"), CallCache(tmp_path / "b")
    source.set("k1", {"text": "from a"}, "litellm:openai/x")
    source.set("k2", {"text": "a's answer"}, "litellm:openai/x")
    source.set("k3", {"text": "the same"}, "litellm:openai/y")
    assert source.claim("k4", ttl=600)  # a call in flight in the other run: no answer yet
    source.set_meta("image:abc", {"sha256": "f00"})
    target.set("k2", {"text": "b's answer"}, "litellm:openai/x")
    target.set("k3", {"text": "the same"}, "litellm:openai/y")
    done = target.merge_from(source)
    assert (done.added, done.same, done.differed, done.facts) == (1, 1, 1, 1)
    assert target.get("k1") == {"text": "from a"}
    assert target.get("k2") == {"text": "b's answer"}  # never overwritten
    assert target.peek("claim:k4") is None
    assert target.models() == {"litellm:openai/x": 2, "litellm:openai/y": 1}
    assert target.get_meta("image:abc") == {"sha256": "f00"}
    again = target.merge_from(source)  # merging twice adds nothing
    assert again.added == 0 and again.same == 2
    source.close()
    target.close()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["cache", "merge", "{tmp}/nothing-here", "--into", "{tmp}/b"], "no cache at"),
        (["cache", "merge", "{tmp}/b", "--into", "{tmp}/b"], "is the cache merged into"),
    ],
)
def test_a_bad_merge_is_one_line_and_exit_2(tmp_path, args, says):
    CallCache(tmp_path / "b").close()
    done = run_cli([a.format(tmp=tmp_path) for a in args])
    assert done.returncode == 2
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nothing-here").exists()
